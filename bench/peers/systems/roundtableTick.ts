/**
 * roundtable's dispatch tick alone (`tick()` from src/db, the SQL function
 * `rt_tick`), under the bench's own minimal loop and no runtime: the
 * baseline for the runtime rows (roundtableRuntime.ts). The gap between the
 * two is what the runtime adds per job (TaskRunner and container actors,
 * the board, the feed) over the ticks every job must ride.
 *
 * The enqueueing side sends the keys as enqueue ops in ticks of
 * `ENQUEUE_BATCH` (want 0). The worker is one loop, one tick in flight: each
 * tick carries the finishes of the no-op jobs the previous tick granted and
 * asks for the free slots (caps: global 20, per user as the variant says);
 * it naps `IDLE_POLL_MS` when it holds nothing and was granted nothing (the
 * enqueuer is another process; the runtime listens for NOTIFY instead).
 * Recovery needs the Reconciler, so it is measured on the runtime rows only.
 */
import { connect, newId, type Session, tick } from '../../../src/db/index.js';
import type { TickOp } from '../../../src/db/tickTypes.js';
import { noopFinish } from '../../tickOps.js';
import type { BenchSystem, QueueClient, WorkerHandle } from '../types.js';
import { batchedEnqueue } from './batchedEnqueue.js';
import { grantLoop } from './grantLoop.js';
import { migrateRoundtable } from './migrateRoundtable.js';

const IDLE_POLL_MS = 10;
const SPEC = { image: 'bench', command: ['true'] };
const ENQUEUE_BATCH = 500;

interface Variant {
  name: string;
  label: string;
  /** Jobs are spread round-robin over this many users. */
  users: number;
  /** Per-user cap; `null`: one user whose cap is the global limit. */
  userCap: number | null;
}

const userOf = (key: string, users: number): string =>
  `u${Number(/\d+/.exec(key)?.[0] ?? 0) % users}`;

function makeTickBaseline(v: Variant): BenchSystem {
  const caps = (concurrency: number) => ({
    globalCap: concurrency,
    defaultUserCap: v.userCap ?? concurrency,
  });
  return {
    name: v.name,
    label: v.label,
    scenarios: ['throughput', 'latency'],
    version: 'roundtable 0.1.0 (src/db tick() at this commit, no runtime)',
    settings: {
      store: 'kysely 0.28 PostgresDialect over pg (src/db connect(), pool max 10)',
      enqueue: `the bench process: enqueue ops in ticks of ${ENQUEUE_BATCH} (want 0); latency: one tick per job`,
      'dispatch stand-in': `one loop per worker process, one tick in flight: finishes of the previous tick's grants + want = free slots (global 20); naps ${IDLE_POLL_MS} ms when it holds and got nothing`,
      users:
        v.userCap === null
          ? '1 user, per-user cap = global cap'
          : `${v.users} users round-robin, per-user cap ${v.userCap}`,
    },
    recovery: {
      defaultBehaviour: "none: recovery is the runtime Reconciler's (see the runtime rows)",
      measuredWith: 'not measured: no runtime in this row',
    },
    recoveryUnavailable: 'n/a: tick path only (see the runtime rows)',

    setup: migrateRoundtable,

    async client(url): Promise<QueueClient> {
      const h = await connect({ databaseUrl: url, poolMax: 2 });
      const enqueue = (key: string): TickOp => ({
        op: 'enqueue',
        ref: key,
        taskId: newId('task'),
        sessionId: newId('session'),
        userId: userOf(key, v.users),
        title: key,
        spec: SPEC,
      });
      const send = async (keys: readonly string[]): Promise<void> => {
        await tick(h.db, {
          owner: 'bench-enqueuer@0',
          now: new Date(),
          ...caps(20),
          want: 0,
          ops: keys.map(enqueue),
        });
      };
      return {
        ...batchedEnqueue(ENQUEUE_BATCH, send),
        async pending() {
          const r = await h.db
            .selectFrom('sessions')
            .select((eb) => eb.fn.countAll<string>().as('n'))
            .where('status', 'in', ['queued', 'running'])
            .executeTakeFirstOrThrow();
          return Number(r.n);
        },
        async failedKeys() {
          const rows = await h.db
            .selectFrom('sessions as s')
            .innerJoin('tasks as t', 't.id', 's.task_id')
            .select('t.title')
            .where('s.status', '=', 'failed')
            .execute();
          return rows.map((r) => r.title);
        },
        close: () => h.close(),
      };
    },

    async startWorker(url, mode, onStart): Promise<WorkerHandle> {
      const h = await connect({ databaseUrl: url, poolMax: 2 });
      const owner = `bench-tick@${process.pid}`;
      let n = 0;
      return grantLoop<Session>({
        owner,
        mode,
        idleMs: IDLE_POLL_MS,
        async call(done, free) {
          const r = await tick(h.db, {
            owner,
            now: new Date(),
            ...caps(mode.concurrency),
            want: free,
            ops: done.map((s): TickOp => noopFinish(s, `f${++n}`)),
          });
          return r.granted.map((g) => ({ key: g.task.title, run: g.session }));
        },
        onStart,
        close: () => h.close(),
      });
    },
  };
}

export const roundtableTick = makeTickBaseline({
  name: 'roundtable-tick',
  label: 'roundtable tick() only (src/db + bench loop, no runtime), caps on, 100 users',
  users: 100,
  userCap: 1,
});
