/**
 * The Reconciler's advisory lock on the Postgres server (PGlite has one
 * connection, so the lock cannot even be taken there without deadlocking
 * the pass): two nodes with their own pools on one database and one
 * simulated cluster; only one reconciles at a time.
 */
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { withPassDeadline, withReconcilerLock } from '../../src/actors/reconciler.js';
import { createRuntime } from '../../src/actors/runtime.js';
import type { Runtime } from '../../src/actors/runtimeTypes.js';
import { SimulatedBackend } from '../../src/containers/simulated/SimulatedBackend.js';
import {
  ADVISORY_LOCKS,
  connect,
  type DbHandle,
  LOCK_NAMESPACE,
  migrate,
} from '../../src/db/index.js';
import { createTestRuntime, type TestRuntime } from '../../src/testing/index.js';
import { TestClock } from '../../src/testing/TestClock.js';
import { TEST_DATABASE_URL_VAR, truncateAll, withDatabase } from '../support/databases.js';

const adminUrl = process.env[TEST_DATABASE_URL_VAR] ?? '';

/** Server-only: without the variable, skipped with the reason in the title; in CI, a failure. */
function describeServer(name: string, body: () => void): void {
  if (adminUrl !== '') {
    describe(`${name} [postgres server]`, body);
    return;
  }
  const title = `${name} [postgres server] (set ${TEST_DATABASE_URL_VAR} to run)`;
  if (process.env.CI === 'true') {
    describe(title, () => {
      it('runs in CI', () => {
        throw new Error(`CI=true but ${TEST_DATABASE_URL_VAR} is not set`);
      });
    });
  } else describe.skip(title, body);
}

async function admin(statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 10_000 });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/**
 * Waits for real I/O (a server answers over a socket) until `done()`; a
 * deadline, not a sleep: it returns as soon as the condition holds.
 */
async function until(done: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise<void>((r) => setImmediate(r));
  }
}

describeServer('Reconciler advisory lock', () => {
  const dbName = `roundtable_lock_${process.pid}_${randomBytes(6).toString('hex')}`;
  /** Three pools: the harness's, and one per node, as separate machines would have. */
  let main: DbHandle;
  let poolA: DbHandle;
  let poolB: DbHandle;
  beforeAll(async () => {
    await admin(`CREATE DATABASE ${dbName}`);
    const url = withDatabase(adminUrl, dbName);
    main = await connect({ databaseUrl: url });
    await migrate(main.db);
    poolA = await connect({ databaseUrl: url });
    poolB = await connect({ databaseUrl: url });
  }, 60_000);
  afterAll(async () => {
    for (const h of [main, poolA, poolB]) await h?.close();
    await admin(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
  });
  beforeEach(async () => {
    await truncateAll(main.db);
  });

  const advisoryHeld = async () => {
    const { rows } = await sql<{ n: string }>`
      SELECT count(*) AS n FROM pg_locks
      WHERE locktype = 'advisory' AND classid = ${LOCK_NAMESPACE}
        AND objid = ${ADVISORY_LOCKS.reconciler} AND granted
        -- This database only: every server node now leads its own database's
        -- Reconciler on that key, so a suite running beside this one holds it too.
        AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`.execute(
      main.db,
    );
    return Number(rows[0]?.n);
  };

  describe('withReconcilerLock', () => {
    it('while one node holds it, another node (and another call on the same pool) skips', async () => {
      const gate = deferred();
      let inside = false;
      const first = withReconcilerLock(poolA.db, async () => {
        inside = true;
        await gate.promise;
        return 'a';
      });
      await until(() => inside, 'the first holder');
      expect(await advisoryHeld()).toBe(1);
      let otherRan = false;
      expect(
        await withReconcilerLock(poolB.db, async () => {
          otherRan = true;
          return 'b';
        }),
      ).toBeNull();
      // Same pool, another pooled connection: another session, so no re-entry either.
      expect(
        await withReconcilerLock(poolA.db, async () => {
          otherRan = true;
          return 'a2';
        }),
      ).toBeNull();
      expect(otherRan).toBe(false);
      gate.resolve();
      expect(await first).toBe('a');
      expect(await advisoryHeld()).toBe(0);
      expect(await withReconcilerLock(poolB.db, async () => 'b')).toBe('b');
    });

    it('a pass hung on a call that never answers gives the lock back at its deadline', async () => {
      const clock = new TestClock();
      const held = withReconcilerLock(poolA.db, () =>
        withPassDeadline(() => new Promise<never>(() => {}), { clock, ms: 30_000 }),
      );
      await until(() => clock.pending() === 1, 'the pass to start under the lock');
      expect(await advisoryHeld()).toBe(1);
      expect(await withReconcilerLock(poolB.db, async () => 'b')).toBeNull();
      clock.fireNext(clock.now() + 30_000);
      await expect(held).rejects.toMatchObject({ code: 'RECONCILER_PASS_TIMEOUT' });
      expect(await advisoryHeld()).toBe(0);
      expect(await withReconcilerLock(poolB.db, async () => 'b')).toBe('b');
    });

    it('a failing pass releases the lock and keeps its error', async () => {
      const boom = new Error('pass failed');
      await expect(
        withReconcilerLock(poolA.db, async () => {
          throw boom;
        }),
      ).rejects.toBe(boom);
      expect(await advisoryHeld()).toBe(0);
      expect(await withReconcilerLock(poolB.db, async () => 'b')).toBe('b');
    });
  });

  describe('two runtimes on one database and one cluster', () => {
    let h: TestRuntime | undefined;
    const nodes: Runtime[] = [];
    const errors: unknown[] = [];
    /** Gates left shut by a failed test would keep a pass, and the lock, held forever. */
    const gates: Array<() => void> = [];
    afterEach(async () => {
      for (const open of gates.splice(0)) open();
      const killed = [...nodes.splice(0), ...(h ? [h.runtime] : [])];
      for (const n of killed) n.kill();
      // A killed node's statements already sent still run (a board read, a
      // tick, a pass's last write); the next test's TRUNCATE deadlocked with
      // one in CI. The harness's own runtime is killed at its boot, so it too.
      await until(() => killed.every((n) => n.busy() === 0), 'the killed nodes to drain');
      await h?.close();
      h = undefined;
      errors.length = 0;
    });

    const OWNERS = new Set(['nodeA@b1', 'nodeB@b1']);
    /** A backend whose sweep (step 3, only ever called inside a pass) can be held shut. */
    const gatedBackend = (harness: TestRuntime) => {
      const backend = new SimulatedBackend(harness.cluster);
      const probe = {
        listHandles: 0,
        repins: 0,
        gate: null as Promise<void> | null,
      };
      const list = backend.listHandles.bind(backend);
      backend.listHandles = async () => {
        probe.listHandles += 1;
        if (probe.gate) await probe.gate;
        return list();
      };
      const repin = backend.repin.bind(backend);
      backend.repin = async (image) => {
        probe.repins += 1;
        return repin(image);
      };
      return { backend, probe };
    };
    const boot = async (
      harness: TestRuntime,
      nodeId: string,
      pool: DbHandle,
      backend: SimulatedBackend,
      options: { lock: boolean; runnerImage?: string },
    ) => {
      const rt = await createRuntime({
        db: pool.db,
        backend,
        clock: harness.clock,
        caps: { maxRunning: 4, defaultUserCap: 2 },
        pollMs: 5_000,
        nodeId,
        bootId: 'b1',
        reconcileLock: options.lock,
        liveness: { isAlive: async (owner) => OWNERS.has(owner) },
        ...(options.runnerImage ? { runnerImage: options.runnerImage } : {}),
        onError: (e) => errors.push(e),
      });
      nodes.push(rt);
      return rt;
    };
    /** Settles nodes: no I/O in flight on any for a few turns of the loop. */
    const settleNodes = async (which: Runtime[] = nodes) => {
      let quiet = 0;
      await until(() => {
        quiet = which.every((n) => n.busy() === 0) ? quiet + 1 : 0;
        return quiet >= 3;
      }, 'the nodes to settle');
    };
    /** Moves the shared virtual clock, settling both nodes after each timer. */
    const advance = async (harness: TestRuntime, ms: number) => {
      const target = harness.clock.now() + ms;
      await settleNodes();
      for (let due = harness.clock.nextDue(target); due !== null; ) {
        harness.clock.fireNext(due);
        await settleNodes();
        due = harness.clock.nextDue(target);
      }
      harness.clock.fireNext(target);
      await settleNodes();
    };

    it('two nodes booting at once over the orphans of a dead node: each run adopted once, by one node', async () => {
      h = await createTestRuntime({ db: main.db, nodeId: 'old' });
      const ids: string[] = [];
      for (const user of ['u1', 'u2', 'u3'])
        ids.push(
          (
            await h.runtime.createTask(user, {
              title: user,
              image: 'runner:v1',
              command: ['agent', '120'],
            })
          ).sessionId,
        );
      await h.advance(10_000);
      expect((await h.sessions()).map((s) => s.status)).toEqual(['running', 'running', 'running']);
      h.runtime.kill();
      const [a, b] = await Promise.all([
        boot(h, 'nodeA', poolA, new SimulatedBackend(h.cluster), { lock: true }),
        boot(h, 'nodeB', poolB, new SimulatedBackend(h.cluster), { lock: true }),
      ]);
      await settleNodes();
      for (const id of ids) {
        const adoptions = (await h.events(id)).filter((e) => e.reason === 'adopted');
        expect(adoptions).toHaveLength(1);
      }
      const runnersA = new Set(a.liveRunners());
      const runnersB = new Set(b.liveRunners());
      expect([...runnersA].filter((id) => runnersB.has(id))).toEqual([]);
      expect(new Set([...runnersA, ...runnersB])).toEqual(new Set(ids));
      await advance(h, 200_000);
      const rows = await h.sessions();
      expect(rows.map((s) => s.status)).toEqual(['succeeded', 'succeeded', 'succeeded']);
      for (const id of ids) expect(h.execLog(id)).toHaveLength(1);
      expect(errors).toEqual([]);
    }, 60_000);

    it.each([true, false])(
      'lock %s: a pass held inside node A; node B reconciling at that moment acts only without the lock',
      async (lock) => {
        h = await createTestRuntime({ db: main.db, nodeId: 'harness' });
        h.runtime.kill();
        const A = gatedBackend(h);
        const B = gatedBackend(h);
        const a = await boot(h, 'nodeA', poolA, A.backend, { lock });
        await settleNodes();
        const b = await boot(h, 'nodeB', poolB, B.backend, { lock });
        await settleNodes();
        const gate = deferred();
        gates.push(gate.resolve);
        A.probe.gate = gate.promise;
        const before = { a: A.probe.listHandles, b: B.probe.listHandles };
        const held = a.reconcile();
        await until(() => A.probe.listHandles === before.a + 1, "node A's pass to reach the sweep");
        await b.reconcile();
        // With the lock B skipped its pass: its sweep never ran. Without it, B acted alongside A.
        expect(B.probe.listHandles - before.b).toBe(lock ? 0 : 1);
        gate.resolve();
        await held;
        await b.reconcile();
        expect(B.probe.listHandles - before.b).toBe(lock ? 1 : 2);
        expect(errors).toEqual([]);
      },
      60_000,
    );

    it('a boot pass skipped because another node holds the lock is retried as a boot pass (the re-pin is not lost)', async () => {
      h = await createTestRuntime({ db: main.db, nodeId: 'harness' });
      h.runtime.kill();
      const A = gatedBackend(h);
      const a = await boot(h, 'nodeA', poolA, A.backend, { lock: true });
      await settleNodes();
      const gate = deferred();
      gates.push(gate.resolve);
      A.probe.gate = gate.promise;
      const calls = A.probe.listHandles;
      const held = a.reconcile();
      await until(() => A.probe.listHandles === calls + 1, "node A's pass to reach the sweep");
      const B = gatedBackend(h);
      const b = await boot(h, 'nodeB', poolB, B.backend, { lock: true, runnerImage: 'runner:v2' });
      await settleNodes([b]);
      expect(B.probe.repins).toBe(0);
      // A tick while the lock is still taken: the retried boot pass is skipped again, and says so.
      await expect(b.reconcile()).rejects.toMatchObject({
        name: 'ReconcilerLockBusyError',
        code: 'RECONCILER_LOCK_BUSY',
      });
      expect(B.probe.repins).toBe(0);
      gate.resolve();
      await held;
      // The tick runs the retried boot pass: it is the one that re-pins.
      await b.reconcile();
      await settleNodes();
      expect(B.probe.repins).toBe(1);
      await b.reconcile();
      expect(B.probe.repins).toBe(1);
      expect(errors).toEqual([]);
    }, 60_000);
  });
});
