/**
 * Two `roundtable start --pooler transaction` processes behind a real
 * PgBouncer in transaction mode with its stock settings (a private one,
 * test/support/privatePgbouncer.ts), on one database of the test server:
 *
 * - both boot through it (migrations, the boot sweep), say on `/healthz`
 *   that they poll and hold no lock, and run tasks submitted through either
 *   node; every card's end reaches both boards (the poll is the only way
 *   there); the caps hold at every instant of the replayed history; and no
 *   LISTEN of theirs sits on a pooled server connection (PgBouncer logs a
 *   notification a server sends while no client is linked to it: none; two
 *   nodes started without `--pooler`, on a pooler told to ignore their
 *   startup settings, made it log four in their first seconds);
 * - the two judge each other by the window each one's row promises
 *   (`--dead-after-ms`: 5 s for A, 30 s for B, so B beats every 6 s, longer
 *   than A's own window): neither is found dead while both live (before
 *   migration 19 A took B's runs every few seconds);
 * - a node SIGKILLed mid-run (no boot lock to be freed) is found dead by its
 *   heartbeat row going stale (its own window), watched for on the rows,
 *   and its run is queued again and runs on the other node, long before the
 *   periodic pass (a minute) would have looked.
 *
 * And before a second PgBouncer that accepts those startup settings (so a
 * node without `--pooler` gets in, its settings silently dropped): `start`
 * refuses to run after its session probe, naming the flag, with no row
 * written; and a node started on the server directly (through a TCP proxy)
 * whose address leads to that pooler after every connection was cut (a DNS
 * switch) keeps its listener and locks lost (no grants, polling), logs the
 * reason as an error in the CLI's words once per holder, and is back by
 * itself when the address leads to the server again.
 *
 * Skipped without the test server or pgbouncer, failed with CI=true. Real
 * processes, so real time: every wait is bounded.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import WebSocket from 'ws';
import { runCli } from '../../src/cli/runCli.js';
import { ADVISORY_LOCKS, BOOT_LOCK_NAMESPACE, LOCK_NAMESPACE } from '../../src/db/advisoryLocks.js';
import { connect, type DbHandle } from '../../src/db/connect.js';
import { readDispatchHistory, replayDispatch } from '../support/dispatchReplay.js';
import { startFreezableProxy } from '../support/freezableProxy.js';
import {
  describeWithPgbouncer,
  PERMISSIVE_POOLER,
  PERMISSIVE_SESSION_POOLER,
  type PrivatePgbouncer,
} from '../support/privatePgbouncer.js';
import { type Captured, capture } from './cliCapture.js';
import type { CliProcess } from './cliProcess.js';
import {
  ADMIN,
  createTaskOver,
  E2eCluster,
  type E2eNode,
  STOP_MS,
  transition,
  until,
} from './e2eCluster.js';

const CAPS = { maxRunning: 2, defaultUserCap: 1 };
/** Each node's `--dead-after-ms`: B beats every 6 s, longer than A's whole window. */
const DEAD_AFTER_MS = { a: 5_000, b: 30_000 };
const STRAY = /got packet 'A' from server when not linked/g;

/** The queued positions the admin's board of `node` shows now (a fresh snapshot), by task id. */
async function boardLine(node: E2eNode): Promise<Map<string, number>> {
  const url = `${node.baseUrl.replace(/^http/, 'ws')}/ws`;
  const ws = new WebSocket(url, ['roundtable.board.v1', `roundtable.bearer.${ADMIN}`]);
  try {
    const snapshot = await new Promise<{
      cards: { taskId: string; queued: { position: number } | null }[];
    }>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no snapshot from ${node.name}`)), 5_000);
      ws.on('error', reject);
      ws.on('open', () => ws.send(JSON.stringify({ type: 'subscribe', v: 1 })));
      ws.on('message', (data) => {
        const frame = JSON.parse(String(data)) as { type: string };
        if (frame.type !== 'snapshot') return;
        clearTimeout(timer);
        resolve(frame as never);
      });
    });
    return new Map(
      snapshot.cards.flatMap((c) =>
        c.queued === null ? [] : [[c.taskId, c.queued.position] as const],
      ),
    );
  } finally {
    ws.terminate();
  }
}

describeWithPgbouncer(
  'nodes behind a transaction pooler [private pgbouncer]',
  (getPooler, server) => {
    let cluster: E2eCluster;
    let a: E2eNode;
    let b: E2eNode;
    const procs = new Map<E2eNode, CliProcess>();
    const handles: DbHandle[] = [];
    const stray = () => getPooler().log().match(STRAY)?.length ?? 0;
    const health = async (node: E2eNode): Promise<Record<string, unknown>> =>
      (await (
        await fetch(`${node.baseUrl}/healthz`, { signal: AbortSignal.timeout(5_000) })
      ).json()) as Record<string, unknown>;
    const succeededCount = async (taskIds: readonly string[]): Promise<number> => {
      const rows = await cluster.query<{ n: string }>(
        `SELECT count(*) AS n FROM sessions WHERE task_id = ANY($1) AND status = 'succeeded'`,
        [taskIds],
      );
      return Number(rows[0]?.n ?? 0);
    };

    beforeAll(async () => {
      cluster = await E2eCluster.create(server, 'rt_pooler');
      const database = new URL(cluster.url).pathname.slice(1);
      const settings = {
        backend: 'simulated',
        databaseUrl: getPooler().urlFor(database),
        pooler: 'transaction',
        caps: CAPS,
      };
      a = await cluster.addNode('pooled-a', { ...settings, deadAfterMs: DEAD_AFTER_MS.a });
      b = await cluster.addNode('pooled-b', { ...settings, deadAfterMs: DEAD_AFTER_MS.b });
    }, 120_000);

    afterAll(async () => {
      for (const h of handles) await h.close();
      if (cluster !== undefined) await cluster.close(server);
    }, 60_000);

    it('without --pooler the pooler refuses the connect, and the CLI says which flag to add', async () => {
      const database = new URL(cluster.url).pathname.slice(1);
      const c = capture();
      const dir = mkdtempSync(join(tmpdir(), 'rt-pooler-cli-'));
      try {
        const code = await runCli(
          ['status', '--database-url', getPooler().urlFor(database), '--data-dir', dir],
          c.io,
        );
        expect(code, c.err()).not.toBe(0);
        expect(c.err()).toContain(
          'cannot reach the postgres store: unsupported startup parameter: statement_timeout; behind PgBouncer in transaction mode, start with --pooler transaction (docs/operations.md)',
        );
        // Said once, in the CLI's words, not the library's as well.
        expect(c.err()).not.toContain("pooler: 'transaction'");
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it('both nodes run what either was given, show every card’s end, keep the caps, and leave no LISTEN behind', async () => {
      procs.set(a, await cluster.startReady(a));
      procs.set(b, await cluster.startReady(b));
      const bothUpAt = Date.now();
      for (const node of [a, b]) {
        expect(await health(node)).toMatchObject({
          lock: 'none',
          takingGrants: true,
          reconciler: 'none',
          notifications: 'polling',
        });
      }
      const tasks: string[] = [];
      for (const node of [a, b])
        for (const user of ['ann', 'bo', 'cy']) {
          const t = await createTaskOver(node, user, {
            title: `${node.name} for ${user}`,
            image: 'sim',
            command: ['sleep', '1'],
          });
          tasks.push(t.taskId);
        }
      await until(
        'every task succeeded',
        async () => ((await succeededCount(tasks)) === tasks.length ? true : undefined),
        60_000,
      );
      // Each board heard of every card's end, its own node's and the other's (by the poll).
      for (const node of [a, b]) {
        const p = procs.get(node);
        for (const taskId of tasks)
          await p?.waitFor(
            transition('succeeded', taskId),
            10_000,
            `${node.name} shows ${taskId} done`,
          );
      }
      const direct = await connect({ databaseUrl: cluster.url, poolMax: 1 });
      handles.push(direct);
      const replay = replayDispatch(await readDispatchHistory(direct.db), {
        globalCap: CAPS.maxRunning,
        userCap: () => CAPS.defaultUserCap,
      });
      expect(replay.violations).toEqual([]);
      expect(replay.grants).toBe(tasks.length);
      expect(replay.maxRunning).toBe(CAPS.maxRunning);
      const owners = await cluster.query<{ owner_node: string }>(
        'SELECT DISTINCT owner_node FROM sessions WHERE task_id = ANY($1)',
        [tasks],
      );
      expect(owners.length).toBeGreaterThan(0);
      expect(stray()).toBe(0);
      // Two of B's beat periods with both up: by A's own window B would have
      // been dead for a second of each (a warning, and its runs taken).
      const twoBeats = (2 * DEAD_AFTER_MS.b) / 5 + 1_000;
      await new Promise((r) => setTimeout(r, Math.max(0, bothUpAt + twoBeats - Date.now())));
      // Nothing went wrong in the background either (a LISTEN tried and
      // refused would say so, as would a live node found dead).
      for (const node of [a, b]) {
        const warnings = (procs.get(node)?.records ?? []).filter(
          (r) => typeof r.level === 'number' && r.level >= 40,
        );
        expect(warnings, node.name).toEqual([]);
      }
    }, 180_000);

    it('every board shows the one global line, the order the grants then take, within a poll of each change', async () => {
      // Each user may run the whole cluster's cap here, so that only the
      // global cap decides who waits: with a user at their own cap when a
      // slot frees, the next of another user goes first (the line skips a
      // user who may not run more), and the grants would not follow the
      // positions however exact they are.
      for (const user of ['ann', 'bo', 'cy']) {
        const res = await fetch(`${a.baseUrl}/api/users/${user}/cap`, {
          method: 'PUT',
          headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
          body: JSON.stringify({ maxRunning: CAPS.maxRunning }),
          signal: AbortSignal.timeout(10_000),
        });
        expect(res.status).toBe(204);
      }
      const blockers = [
        await createTaskOver(a, 'ann', { title: 'blocks', image: 'sim', command: ['sleep', '4'] }),
        await createTaskOver(b, 'bo', { title: 'blocks', image: 'sim', command: ['sleep', '4'] }),
      ];
      await until(
        'both blockers run',
        async () => {
          const rows = await cluster.query<{ n: string }>(
            `SELECT count(*) AS n FROM sessions WHERE task_id = ANY($1) AND status = 'running'`,
            [blockers.map((t) => t.taskId)],
          );
          return Number(rows[0]?.n) === 2 ? true : undefined;
        },
        30_000,
      );
      // Four in line, submitted through both nodes in turn.
      const queued = [];
      for (const [node, user] of [
        [a, 'cy'],
        [b, 'ann'],
        [a, 'bo'],
        [b, 'cy'],
      ] as const)
        queued.push(
          await createTaskOver(node, user, {
            title: `waits (${user})`,
            image: 'sim',
            command: ['sleep', '0'],
          }),
        );
      const ids = queued.map((t) => t.taskId);
      const lastSubmit = Date.now();
      // Both boards agree on every position (the other node's submissions reach each by the poll).
      const line = await until(
        'both boards show the same four positions',
        async () => {
          const [onA, onB] = [await boardLine(a), await boardLine(b)];
          const pick = (m: Map<string, number>) => ids.map((id) => m.get(id));
          const [pa, pb] = [pick(onA), pick(onB)];
          return pa.every((p) => p !== undefined) && JSON.stringify(pa) === JSON.stringify(pb)
            ? pa
            : undefined;
        },
        10_000,
        100,
      );
      // A second's poll (and a tick) after the last change: the poll is the bound.
      expect(Date.now() - lastSubmit).toBeLessThan(3_000);
      expect([...line].sort()).toEqual([1, 2, 3, 4]);
      await until(
        'the four ran',
        async () => ((await succeededCount(ids)) === ids.length ? true : undefined),
        60_000,
      );
      // The positions were the order the database then granted them in.
      const direct = await connect({ databaseUrl: cluster.url, poolMax: 1 });
      handles.push(direct);
      const sessionOf = new Map(queued.map((t, i) => [t.sessionId, i]));
      const grantOrder = (await readDispatchHistory(direct.db))
        .filter((e) => e.to === 'running' && sessionOf.has(e.sessionId))
        .map((e) => line[sessionOf.get(e.sessionId) ?? -1]);
      expect(grantOrder).toEqual([1, 2, 3, 4]);
    }, 120_000);

    it('a node killed mid-run is found dead by its stale heartbeat; its run runs again on the other node', async () => {
      const task = await createTaskOver(a, 'bo', {
        title: 'outlives its node',
        image: 'sim',
        command: ['sleep', '3'],
      });
      const first = await until(
        'the run started',
        async () =>
          (
            await cluster.query<{ owner_node: string }>(
              `SELECT owner_node FROM sessions WHERE task_id = $1 AND status = 'running'`,
              [task.taskId],
            )
          )[0]?.owner_node,
        30_000,
      );
      const [victim, survivor] = first.startsWith(`${a.name}@`) ? [a, b] : [b, a];
      const dead = procs.get(victim);
      const killedAt = Date.now();
      dead?.signal('SIGKILL');
      await dead?.exitCode(STOP_MS);
      const lostAt = await until(
        'attempt 1 failed as owner_lost',
        async () => {
          const rows = await cluster.query<{ finished_at: Date }>(
            `SELECT finished_at FROM sessions WHERE task_id = $1 AND failure_reason = 'owner_lost'`,
            [task.taskId],
          );
          return rows[0]?.finished_at;
        },
        60_000,
      );
      // Seen by the watch on the rows once the victim's own window passed (its
      // beat was at most a fifth of it old at the kill) and a poll, not by the
      // periodic pass a minute later.
      const window = victim === a ? DEAD_AFTER_MS.a : DEAD_AFTER_MS.b;
      const seenAfterMs = new Date(lostAt).getTime() - killedAt;
      expect(seenAfterMs).toBeGreaterThan(window * 0.8 - 500);
      expect(seenAfterMs).toBeLessThan(window + 10_000);
      const attempts = await until(
        'attempt 2 succeeded',
        async () => {
          const rows = await cluster.query<{
            attempt: number;
            status: string;
            failure_reason: string | null;
            owner_node: string | null;
          }>(
            'SELECT attempt, status, failure_reason, owner_node FROM sessions WHERE task_id = $1 ORDER BY attempt',
            [task.taskId],
          );
          return rows.some((r) => r.attempt === 2 && r.status === 'succeeded') ? rows : undefined;
        },
        60_000,
      );
      expect(attempts[0]).toMatchObject({
        attempt: 1,
        status: 'failed',
        failure_reason: 'owner_lost',
      });
      expect(attempts[1]?.owner_node?.startsWith(`${survivor.name}@`)).toBe(true);
      // The survivor says so, as a warning (a clean stop would be news at info).
      const said = procs
        .get(survivor)
        ?.records.find(
          (r) => r.msg === 'another boot is gone: its runs are adopted or queued again now',
        );
      expect(said).toMatchObject({ level: 40, reason: 'beat_stale' });
      expect(attempts).toHaveLength(2);
    }, 120_000);
  },
);

/** A database of the suite's own (an E2eCluster with no nodes), made before its tests, dropped after. */
function suiteCluster(server: string, name: string): () => E2eCluster {
  let cluster: E2eCluster | undefined;
  beforeAll(async () => {
    cluster = await E2eCluster.create(server, name);
  }, 60_000);
  afterAll(async () => {
    if (cluster !== undefined) await cluster.close(server);
  }, 60_000);
  return () => {
    if (cluster === undefined) throw new Error('the cluster is made in beforeAll');
    return cluster;
  };
}

/**
 * `roundtable start` in this process through `pooler` with only
 * `--database-url` (no `--pooler`), on the simulated backend and a fresh
 * data dir, removed after `body` (given the CLI's exit) is done with it.
 */
async function startWithoutFlag(
  pooler: PrivatePgbouncer,
  cluster: E2eCluster,
  c: Captured,
  body: (running: Promise<number>) => Promise<void>,
): Promise<void> {
  const database = new URL(cluster.url).pathname.slice(1);
  const dir = mkdtempSync(join(tmpdir(), 'rt-unflagged-cli-'));
  try {
    const args = ['start', '--port', '0', '--backend', 'simulated'];
    await body(
      runCli([...args, '--database-url', pooler.urlFor(database), '--data-dir', dir], c.io),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describeWithPgbouncer(
  'a node behind a pooler that accepts its startup settings [private pgbouncer]',
  (getPooler, server) => {
    const cluster = suiteCluster(server, 'rt_fooled');

    it('start without --pooler refuses to run, says why and which flag to add, and leaves nothing behind', async () => {
      const c = capture();
      // The connect succeeds (the pooler drops the settings); the node's probe does not.
      await startWithoutFlag(getPooler(), cluster(), c, async (running) => {
        expect(await running, c.err()).toBe(3);
      });
      // Under JSON logs (the capture's) start's failure is a record on stdout.
      const said = `${c.out()}${c.err()}`;
      expect(said).toContain('a connection of this node is not a session of its own');
      expect(said).toContain(
        'behind PgBouncer in transaction mode, start with --pooler transaction (docs/operations.md)',
      );
      expect(said).not.toContain("pooler: 'transaction'");
      const beats = await cluster().query<{ n: string }>(
        'SELECT count(*) AS n FROM node_heartbeats',
      );
      expect(beats).toEqual([{ n: '0' }]);
    }, 60_000);

    it('a running node whose address leads there after a cut stays lost, says so once, and comes back', async () => {
      // The node reaches the server through a proxy; the "DNS switch" points
      // the proxy at the pooler and cuts every connection through it.
      const direct = new URL(cluster().url);
      const proxy = await startFreezableProxy({
        host: direct.hostname,
        port: Number(direct.port || 5432),
      });
      const viaProxy = new URL(direct);
      viaProxy.host = `127.0.0.1:${proxy.port}`;
      const dir = mkdtempSync(join(tmpdir(), 'rt-switched-cli-'));
      const c = capture();
      const records = () =>
        c
          .out()
          .split('\n')
          .filter((l) => l.startsWith('{'))
          .map((l) => JSON.parse(l) as Record<string, unknown>);
      const args = ['start', '--port', '0', '--backend', 'simulated', '--data-dir', dir];
      const running = runCli([...args, '--database-url', viaProxy.toString()], c.io);
      let code: number | string | undefined;
      try {
        const ready = await until(
          'the node to be ready',
          () => records().find((r) => r.msg === 'ready'),
          30_000,
        );
        const health = async () =>
          (await (
            await fetch(`${String(ready.url)}/healthz`, { signal: AbortSignal.timeout(5_000) })
          ).json()) as Record<string, unknown>;
        expect(await health()).toMatchObject({ lock: 'held', notifications: 'listening' });

        const pooler = new URL(getPooler().urlFor(direct.pathname.slice(1)));
        proxy.retarget({ host: pooler.hostname, port: Number(pooler.port) });
        proxy.cut();
        const pooled = () => records().filter((r) => r.code === 'DB_POOLED_SESSION');
        await until('the node to say why', () => (pooled().length > 0 ? true : undefined), 30_000);
        // Lost, and it knows it: no grants, polling (each retry checked again).
        await until(
          'the node to stay lost',
          async () => {
            const h = await health();
            return h.lock !== 'held' && h.takingGrants === false && h.notifications === 'polling'
              ? true
              : undefined;
          },
          30_000,
        );
        for (const r of pooled()) {
          expect(r.level).toBe(50);
          expect(String(r.msg)).toContain('takes no grants');
          expect(String(r.msg)).toContain('start with --pooler transaction');
          expect(String(r.msg)).not.toContain("pooler: 'transaction'");
        }
        // Once per holder (the listener, the boot and leader locks), not per retry.
        expect(pooled().length).toBeLessThanOrEqual(3);
        // What an operator alerts on.
        const metrics = await fetch(`${String(ready.url)}/metrics`, {
          headers: { authorization: `Bearer ${String(ready.board).split('#token=')[1]}` },
          signal: AbortSignal.timeout(5_000),
        });
        const text = await metrics.text();
        expect(text).toMatch(/^roundtable_taking_grants 0$/m);
        expect(text).toMatch(/^roundtable_notifications_listening 0$/m);
        // No boot or leader lock in this database (session locks that would outlive
        // the node on a pooled connection). A tick or a heartbeat write the
        // lost node still sends through the pooler holds the tick lock for
        // its transaction: that one is not asked about.
        const lockRows = await cluster().query<{ classid: string; objid: string }>(
          `SELECT classid::text, objid::text FROM pg_locks WHERE locktype = 'advisory'
             AND (classid = ${BOOT_LOCK_NAMESPACE}::oid
               OR (classid = ${LOCK_NAMESPACE}::oid AND objid = ${ADVISORY_LOCKS.reconciler}::oid))
             AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
        );
        expect(lockRows).toEqual([]);

        // The address leads to the server again: back by itself.
        proxy.retarget({ host: direct.hostname, port: Number(direct.port || 5432) });
        proxy.cut();
        await until(
          'the node to be back',
          async () => {
            const h = await health().catch(() => ({}) as Record<string, unknown>);
            return h.lock === 'held' && h.takingGrants === true && h.notifications === 'listening'
              ? true
              : undefined;
          },
          30_000,
        );
        expect(pooled().length).toBeLessThanOrEqual(3);
      } finally {
        // Stopped on a failure too: the node is this process's.
        c.signal('SIGINT');
        code = await Promise.race([
          running,
          new Promise<string>((r) => setTimeout(() => r('not stopped'), STOP_MS)),
        ]);
        await proxy.close();
        rmSync(dir, { recursive: true, force: true });
      }
      expect(code, c.err()).toBe(0);
    }, 120_000);
  },
  PERMISSIVE_POOLER,
);

describeWithPgbouncer(
  'a node behind a session pooler that drops its startup settings [private pgbouncer]',
  (getPooler, server) => {
    const cluster = suiteCluster(server, 'rt_dropped');

    it('start runs (its sessions are real) and warns once that its deadlines are the role’s', async () => {
      const c = capture();
      const said = () => `${c.out()}${c.err()}`;
      await startWithoutFlag(getPooler(), cluster(), c, async (running) => {
        await until(
          'the node to be ready',
          () => (said().includes('"msg":"ready') ? true : undefined),
          30_000,
        );
        c.signal('SIGINT');
        expect(await running, said()).toBe(0);
      });
      const warnings = said()
        .split('\n')
        .filter((l) => l.includes('the server does not hold the deadlines'));
      expect(warnings).toHaveLength(1);
      expect(JSON.parse(warnings[0] ?? '{}')).toMatchObject({
        level: 40,
        settings: ['idle_in_transaction_session_timeout', 'lock_timeout', 'statement_timeout'],
      });
    }, 60_000);
  },
  PERMISSIVE_SESSION_POOLER,
);
