/**
 * roundtable's durable store (src/db) alone, under a minimal dispatcher, as
 * a baseline for the runtime rows (roundtableRuntime.ts): the gap between
 * the two is what the runtime adds per job over the three transactions every
 * job must make. It was the only roundtable row before the runtime landed.
 * The worker here is the bench's own: one dispatcher that
 * claims (claimWithinCaps) while a slot is free, runs a no-op, finishes, and
 * polls every `IDLE_POLL_MS` when nothing is eligible. That is the durable path every
 * job of the real runtime takes (one transaction to enqueue, one to claim
 * under the caps, one to finish), without the in-process wake-up the
 * runtime adds. Recovery needs the Reconciler, so it is measured on the
 * runtime rows only.
 */
import {
  claimWithinCaps,
  connect,
  createTaskWithSession,
  finish,
  getTask,
  migrate,
} from '../../../src/db/index.js';
import type { BenchSystem, QueueClient, WorkerHandle } from '../types.js';

const IDLE_POLL_MS = 10;
const SPEC = { image: 'bench', command: ['true'] };
const ENQUEUE_PARALLEL = 8;

interface Variant {
  name: string;
  label: string;
  /** Jobs are spread round-robin over this many users. */
  users: number;
  /** Per-user cap; `null` leaves caps effectively off (the schema's maximum). */
  userCap: number | null;
}

function hold(): Promise<never> {
  return new Promise<never>(() => {
    setTimeout(() => undefined, 3_600_000);
  });
}

function makeRoundtable(v: Variant): BenchSystem {
  return {
    name: v.name,
    label: v.label,
    scenarios: ['throughput', 'latency'],
    version: 'roundtable 0.1.0 (src/db at this commit, no runtime)',
    settings: {
      store: 'kysely 0.28 PostgresDialect over pg, pool max 10 (connect() default)',
      'dispatch stand-in': `one dispatcher per process: claimWithinCaps(globalCap 20) while a slot is free, run (no-op), finish; woken by a finished run, else polls every ${IDLE_POLL_MS} ms; one extra read per job maps a session to the bench key`,
      users:
        v.userCap === null
          ? '1 user, no per-user cap'
          : `${v.users} users round-robin, per-user cap ${v.userCap}`,
    },
    recovery: {
      defaultBehaviour: "none: recovery is the runtime Reconciler's (see the runtime rows)",
      measuredWith: 'not measured: no runtime in this row',
    },
    recoveryUnavailable: 'n/a: store path only (see the runtime rows)',

    async setup(url) {
      const h = await connect({ databaseUrl: url, poolMax: 1 });
      try {
        await migrate(h.db);
      } finally {
        await h.close();
      }
    },

    async client(url): Promise<QueueClient> {
      const h = await connect({ databaseUrl: url });
      let n = 0;
      const enqueueOne = async (key: string): Promise<void> => {
        const userId = `u${n++ % v.users}`;
        await createTaskWithSession(h.db, { userId, title: key, spec: SPEC, now: new Date() });
      };
      return {
        async enqueueMany(keys) {
          let next = 0;
          const lane = async (): Promise<void> => {
            while (next < keys.length) await enqueueOne(keys[next++]!);
          };
          await Promise.all(Array.from({ length: ENQUEUE_PARALLEL }, lane));
        },
        enqueueOne,
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
      const h = await connect({ databaseUrl: url });
      const owner = `bench-${process.pid}`;
      let stopping = false;
      let running = 0;
      let wake: (() => void) | undefined;
      const nap = (ms: number): Promise<void> =>
        new Promise((r) => {
          const t = setTimeout(r, ms);
          wake = () => {
            clearTimeout(t);
            r();
          };
        });
      const runOne = async (session: { id: string; epoch: number; taskId: string }) => {
        const task = await getTask(h.db, session.taskId);
        onStart(task.title);
        if (mode.job === 'hold') await hold();
        await finish(h.db, {
          sessionId: session.id,
          epoch: session.epoch,
          status: 'succeeded',
          exitCode: 0,
          now: new Date(),
        });
      };
      const runs = new Set<Promise<void>>();
      // One dispatcher per process, as the RunnerPool is: claims are
      // serialised by an advisory lock anyway, so parallel claimers would only
      // queue on it. A finished run wakes it at once; an empty queue makes it
      // poll, because the enqueuer is another process.
      const dispatcher = (async () => {
        while (!stopping) {
          if (running >= mode.concurrency) {
            await nap(IDLE_POLL_MS);
            continue;
          }
          const out = await claimWithinCaps(h.db, {
            owner,
            now: new Date(),
            globalCap: mode.concurrency,
            defaultUserCap: v.userCap ?? 100_000,
          });
          if (out.kind !== 'claimed') {
            await nap(IDLE_POLL_MS);
            continue;
          }
          running++;
          const p: Promise<void> = runOne(out.session).finally(() => {
            running--;
            runs.delete(p);
            wake?.();
          });
          runs.add(p);
        }
      })();
      return {
        ids: [owner],
        async stop() {
          stopping = true;
          wake?.();
          await dispatcher;
          await Promise.all(runs);
          await h.close();
        },
      };
    },
  };
}

export const roundtableStore = makeRoundtable({
  name: 'roundtable-store',
  label: 'roundtable store path only (src/db + bench dispatcher, no runtime)',
  users: 1,
  userCap: null,
});
