/**
 * Adopt only the dead, as a model-based property on the Postgres server:
 * up to three runtimes on one database (each its own pool, boot lock and
 * leader lock, every connection through its own freezable proxy), one
 * simulated cluster on real time whose containers outlive the nodes (so an
 * orphan is adopted, never re-run). fast-check drives boots, submits,
 * kills, lock losses (`pg_terminate_backend` of a boot lock), Reconciler
 * passes and pauses
 * (every socket of a node silent, no FIN, for far less than the heartbeat
 * window). After every command:
 *
 * - the rows: every adoption took the run from an owner that was killed or
 *   had lost its lock before the adoption was written, never from a live
 *   one; each session's exec ran at most once;
 * - the liveness decision: every live node judges every other live node,
 *   whose lock was never lost, `alive`.
 *
 * And at the end every run of a killed node is adopted or re-queued (held
 * by a node still up). Budget: 6 runs of at most 6 commands (about a minute, 2 at a load of 20);
 * FC_RUNS=80 runs more, as when hunting a rare interleaving.
 */
import fc from 'fast-check';
import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { createRuntime } from '../../src/actors/runtime.js';
import type { Runtime } from '../../src/actors/runtimeTypes.js';
import { SimulatedCluster } from '../../src/containers/simulated/SimulatedCluster.js';
import { BOOT_LOCK_NAMESPACE, bootLockKey, connect, type DbHandle } from '../../src/db/index.js';
import { systemClock } from '../../src/supervisor/clock.js';
import { truncateAll } from '../support/databases.js';
import { type FreezableProxy, startFreezableProxy } from '../support/freezableProxy.js';
import {
  describeServer,
  serverDatabase,
  simulatedNodeOptions,
  until as waitUntil,
} from '../support/serverSuite.js';

/** The shared wait with this suite's longer deadline: a pass here spans several nodes. */
const until = (done: () => Promise<boolean> | boolean, what: string, ms = 30_000) =>
  waitUntil(done, what, ms, 50);

/** A heartbeat window (1 s x 5) far longer than a pause (300 ms): a paused node stays alive. */
const BEATS = { heartbeatMs: 1_000, heartbeatStaleBeats: 5 };
const PAUSE_MS = 300;
/** Runs outlast every command: orphans are running when their owner goes. */
const RUN_SECONDS = 600;

interface Node {
  rt: Runtime;
  h: DbHandle;
  proxy: FreezableProxy;
  /** When it was killed, or its boot lock ended by the test (Date.now()); null: alive and trusted. */
  deadSince: number | null;
  killed: boolean;
}

interface World {
  url: string;
  main: DbHandle;
  cluster: SimulatedCluster;
  nodes: Node[];
  booted: number;
  errors: unknown[];
}

const live = (w: World) => w.nodes.filter((n) => !n.killed);

async function boot(w: World): Promise<void> {
  const proxy = await startFreezableProxy({ host: '127.0.0.1', port: 5432 });
  const via = new URL(w.url);
  via.host = `127.0.0.1:${proxy.port}`;
  const h = await connect({ databaseUrl: via.toString(), poolMax: 4 });
  w.booted += 1;
  const rt = await createRuntime({
    ...simulatedNodeOptions(h, w.cluster, `n${w.booted}`, (e) => w.errors.push(e)),
    caps: { maxRunning: 9, defaultUserCap: 9 },
    // At most 3 each: the work spreads over the nodes, so every node has runs to lose.
    localMax: 3,
    ...BEATS,
  });
  w.nodes.push({ rt, h, proxy, deadSince: null, killed: false });
}

type Cmd = fc.AsyncCommand<{ alive: number; booted: number }, World>;

class Boot implements Cmd {
  check = (m: { alive: number; booted: number }) => m.alive < 3 && m.booted < 5;
  async run(m: { alive: number; booted: number }, w: World) {
    await boot(w);
    m.alive += 1;
    m.booted += 1;
  }
  toString = () => 'boot';
}

class Submit implements Cmd {
  constructor(
    readonly pick: number,
    readonly count: number,
  ) {}
  check = (m: { alive: number }) => m.alive > 0;
  async run(_m: unknown, w: World) {
    const nodes = live(w);
    const n = nodes[this.pick % nodes.length] as Node;
    for (let i = 0; i < this.count; i += 1)
      await n.rt.submit(`u${i % 2}`, {
        title: `t${i}`,
        image: 'sim',
        command: ['sleep', String(RUN_SECONDS)],
      });
  }
  toString = () => `submit(${this.pick}, ${this.count})`;
}

class Kill implements Cmd {
  constructor(readonly pick: number) {}
  check = (m: { alive: number }) => m.alive > 1;
  async run(m: { alive: number }, w: World) {
    const nodes = live(w);
    const n = nodes[this.pick % nodes.length] as Node;
    n.deadSince ??= Date.now();
    n.killed = true;
    n.rt.kill();
    m.alive -= 1;
  }
  toString = () => `kill(${this.pick})`;
}

class LoseLock implements Cmd {
  constructor(readonly pick: number) {}
  check = (m: { alive: number }) => m.alive > 1;
  async run(_m: unknown, w: World) {
    const nodes = live(w);
    const n = nodes[this.pick % nodes.length] as Node;
    // From here the others may judge it dead (its lock was released): its runs may go.
    n.deadSince ??= Date.now();
    await sql`SELECT pg_terminate_backend(l.pid) FROM pg_locks l
      WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
        AND l.classid = ${BOOT_LOCK_NAMESPACE}::oid AND l.objid = ${bootLockKey(n.rt.owner)}::oid
        AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())`.execute(
      w.main.db,
    );
  }
  toString = () => `loseLock(${this.pick})`;
}

/** A Reconciler pass now, as its period would run one (a follower's is skipped: it does not lead). */
class Reconcile implements Cmd {
  constructor(readonly pick: number) {}
  check = (m: { alive: number }) => m.alive > 0;
  async run(_m: unknown, w: World) {
    const nodes = live(w);
    const n = nodes[this.pick % nodes.length] as Node;
    await n.rt.reconcile().catch((e: unknown) => {
      if ((e as { code?: string }).code !== 'RECONCILER_LOCK_BUSY') throw e;
    });
  }
  toString = () => `reconcile(${this.pick})`;
}

class Pause implements Cmd {
  constructor(readonly pick: number) {}
  check = (m: { alive: number }) => m.alive > 0;
  async run(_m: unknown, w: World) {
    const nodes = live(w);
    const n = nodes[this.pick % nodes.length] as Node;
    n.proxy.freeze();
    await new Promise((r) => setTimeout(r, PAUSE_MS));
    n.proxy.thaw();
  }
  toString = () => `pause(${this.pick})`;
}

/** Every adoption took its run from an owner dead (killed or unlocked) before it was written. */
async function adoptedOnlyTheDead(w: World): Promise<void> {
  const events = await w.main.db
    // The derived history (migration 7): a tick's claims are on the session
    // row, adoptions in session_events; per session, (epoch, step) orders them.
    .selectFrom('session_history')
    .select(['session_id', 'to_status', 'reason', 'node', 'at', 'id'])
    .where('to_status', '=', 'running')
    .orderBy('session_id')
    .orderBy('epoch')
    .orderBy('step')
    .execute();
  const holder = new Map<string, string | null>();
  const byOwner = new Map(w.nodes.map((n) => [n.rt.owner, n]));
  for (const e of events) {
    const from = holder.get(e.session_id) ?? null;
    // A boot may adopt its own run (its runner crashed and restarted): no owner was fenced.
    if (e.reason === 'adopted' && from !== e.node) {
      const was = from === null ? undefined : byOwner.get(from);
      expect(was, `adopted ${e.session_id} from ${from}`).toBeDefined();
      const since = was?.deadSince ?? null;
      expect(
        since,
        `adopted ${e.session_id} from live ${from} by ${e.node}; errors: ${w.errors.map(String).join(' | ')}`,
      ).not.toBeNull();
      expect(new Date(e.at).getTime()).toBeGreaterThanOrEqual((since ?? 0) - 5);
    }
    holder.set(e.session_id, e.node);
  }
  for (const id of new Set(events.map((e) => e.session_id)))
    expect(w.cluster.execLog(id).length, `execs of ${id}`).toBeLessThanOrEqual(1);
}

/** Every live, trusted node judges every other live, trusted node alive. */
async function liveJudgedAlive(w: World): Promise<void> {
  const trusted = w.nodes.filter((n) => n.deadSince === null);
  for (const observer of trusted) {
    const seen = new Map((await observer.rt.clusterNodes()).map((c) => [c.owner, c.liveness]));
    for (const other of trusted)
      if (other !== observer && seen.has(other.rt.owner))
        expect(seen.get(other.rt.owner), `${observer.rt.owner} on ${other.rt.owner}`).toBe('alive');
  }
}

describeServer('cluster liveness, several nodes: adopt only the dead [postgres server]', () => {
  const server = serverDatabase();

  it('no run of a live owner is ever adopted; every orphan is handled; nothing runs twice', async () => {
    const pick = fc.nat(5);
    const commands = fc.commands(
      [
        fc.constant(new Boot()),
        fc.tuple(pick, fc.integer({ min: 1, max: 4 })).map(([p, c]) => new Submit(p, c)),
        pick.map((p) => new Kill(p)),
        pick.map((p) => new LoseLock(p)),
        pick.map((p) => new Pause(p)),
        pick.map((p) => new Reconcile(p)),
      ],
      { maxCommands: 6 },
    );
    await fc.assert(
      fc.asyncProperty(commands, async (cmds) => {
        await truncateAll(server.main.db);
        const w: World = {
          url: server.url,
          main: server.main,
          cluster: new SimulatedCluster({ clock: systemClock, nodes: ['m1', 'm2'] }),
          nodes: [],
          booted: 0,
          errors: [],
        };
        try {
          await boot(w);
          await boot(w);
          // Work running on both from the start, so kills and losses leave orphans.
          for (const n of w.nodes) await new Submit(0, 3).run({ alive: 1 }, { ...w, nodes: [n] });
          await fc.asyncModelRun(
            () => ({
              model: { alive: 2, booted: 2 },
              real: w,
            }),
            // After each command, the invariants (asyncModelRun runs them in order).
            [...cmds].flatMap((c) => [c, checkAfter(c)]),
          );
          // Every orphan handled: each running row's owner is a node still up.
          const up = new Set(live(w).map((n) => n.rt.owner));
          const running = () =>
            server.main.db
              .selectFrom('sessions')
              .select(['id', 'owner_node', 'handle'])
              .where('status', '=', 'running')
              .execute();
          await until(async () => {
            const rows = await running();
            return rows.every((s) => s.owner_node !== null && up.has(s.owner_node));
          }, 'every orphan adopted or re-queued').catch(async (e: unknown) => {
            // What each node saw, so a timeout says why nobody took the orphans.
            const seen = await Promise.all(
              live(w).map(async (n) => ({
                owner: n.rt.owner,
                health: n.rt.health(),
                nodes: await n.rt.clusterNodes().catch(String),
              })),
            );
            const rows = await running();
            throw new Error(
              `${String(e)}; running: ${JSON.stringify(rows)}; nodes: ${JSON.stringify(seen)}; errors: ${w.errors.map(String).join(' | ')}`,
            );
          });
          await adoptedOnlyTheDead(w);
        } finally {
          for (const n of w.nodes) if (!n.killed) n.rt.kill();
          for (const n of w.nodes) await n.proxy.close();
          for (const n of w.nodes) await n.h.close();
          await sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
            WHERE datname = current_database() AND pid <> pg_backend_pid()
              AND application_name LIKE 'roundtable-%'`.execute(server.main.db);
        }
      }),
      { numRuns: Number(process.env.FC_RUNS ?? 6), endOnFailure: true },
    );
  }, 300_000);
});

/** The invariants, as a command that always runs after `c`. */
function checkAfter(c: Cmd): Cmd {
  return {
    check: () => true,
    async run(_m, w) {
      await adoptedOnlyTheDead(w);
      await liveJudgedAlive(w);
    },
    toString: () => `check after ${c.toString()}`,
  };
}
