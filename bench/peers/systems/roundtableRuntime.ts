/**
 * roundtable's real runtime (`createRuntime`: fair RunnerPool, one
 * TaskRunner per session, heartbeat, Reconciler) on the Postgres server, with
 * the simulated container backend on real time. A job is one
 * `runtime.submit` made in the worker process (where an application calls
 * it: the node process; the bench forwards its enqueues over IPC), whose
 * command is the bench's own `bench <key> <noop|hold>`: the simulated
 * cluster calls the command's script when the exec starts, which is where
 * the bench marks the job started, and `noop` exits 0 at once.
 *
 * Throughput enqueues every key at once (`Promise.all` over `runtime.submit`,
 * 1,000 in flight at a time): concurrent submits ride one tick (group
 * commit), which is the runtime's bulk enqueue. The `roundtable-3nodes`
 * variant runs three node processes on one Postgres: the worker process is
 * node A and forks nodes B and C (nodeChild.ts), each its own OS process with
 * its own createRuntime, nodeId and connection pool; the keys are spread
 * round-robin over the three nodes' `submit`, and every node reports its job
 * starts to A, which reports them to the bench.
 *
 * Recovery: the simulated cluster lives in the worker process and dies with
 * it, so no run survives a SIGKILL and nothing can be adopted: the standby's
 * Reconciler sees each orphaned running row, observes its service absent on
 * its own cluster, and fails it as `owner_lost` with a new attempt queued in
 * the same transaction (failAndRequeue), which its pool then runs. Two ways
 * the standby learns the owner is gone (docs/runtime.md):
 * - `roundtable`: another node (`bench-b`), already up. The victim's boot
 *   lock is freed by the server when its process dies; the standby's
 *   liveness watch sees that within `livenessPollMs` (a DOWN) and runs a
 *   pass at once (the heartbeat window, 20 s x 3, is only the backstop);
 * - `roundtable-restart`: the same node (`bench-a`) booted again after the
 *   kill, as a deploy or a process manager would: another boot of this node
 *   is gone at once, so the boot pass does it.
 */

import { OwnerDownNotice } from '../../../src/actors/clusterLivenessWiring.js';
import { createRuntime } from '../../../src/actors/runtime.js';
import { RUNTIME_DEFAULTS } from '../../../src/actors/runtimeOptions.js';
import type { Clock } from '../../../src/containers/Clock.js';
import type { SimCommandRegistry } from '../../../src/containers/simulated/commands.js';
import { SimulatedBackend } from '../../../src/containers/simulated/SimulatedBackend.js';
import { SimulatedCluster } from '../../../src/containers/simulated/SimulatedCluster.js';
import { connect } from '../../../src/db/index.js';
import type { BenchSystem, QueueClient, ScenarioName, WorkerHandle, WorkerMode } from '../types.js';
import { startWorkerProcess } from '../workerProcess.js';
import { migrateRoundtable } from './migrateRoundtable.js';

/** Submits in flight at once for a bulk enqueue (they ride the ticks together). */
export const SUBMIT_CHUNK = 1000;
const HOLD_MS = 3_600_000;
const NODES = { primary: 'bench-a', standbyOtherNode: 'bench-b' };
const EXTRA_NODE_IDS = ['bench-b', 'bench-c', 'bench-d', 'bench-e'];

interface Variant {
  name: string;
  label: string;
  users: number;
  /** Per-user cap; `null`: one user whose cap is the global limit. */
  userCap: number | null;
  scenarios?: readonly ScenarioName[];
  standby: 'other_node' | 'restart';
  /** Node processes on the one Postgres (default 1). */
  nodes?: number;
}

/** Real time, remembering pending timers so a stopped worker can clear the cluster's. */
export function realClock(): Clock & { clearAll(): void } {
  const timers = new Set<ReturnType<typeof setTimeout>>();
  return {
    now: () => Date.now(),
    setTimeout(fn, ms) {
      const t = setTimeout(() => {
        timers.delete(t);
        fn();
      }, ms);
      timers.add(t);
      return t;
    },
    clearTimeout(id) {
      timers.delete(id as ReturnType<typeof setTimeout>);
      clearTimeout(id as ReturnType<typeof setTimeout>);
    },
    clearAll() {
      for (const t of timers) clearTimeout(t);
      timers.clear();
    },
  };
}

const reconcileS = RUNTIME_DEFAULTS.reconcileMs / 1000;
const heartbeatS = reconcileS / 3;

function makeRuntimeSystem(v: Variant): BenchSystem {
  const standbyText =
    v.standby === 'other_node'
      ? `a second node (nodeId ${NODES.standbyOtherNode}) already up when the worker (nodeId ${NODES.primary}) is SIGKILLed; the server frees the dead boot's lock at once, the standby's liveness watch sees it within ${RUNTIME_DEFAULTS.livenessPollMs} ms (a DOWN), and the pass it runs at once fails each run as owner_lost and queues attempt 2 in the same ticks (the simulated cluster died with the process, so there is nothing to adopt); the heartbeat window (${heartbeatS} s x 3) is only the backstop`
      : `the same node (nodeId ${NODES.primary}) started again in a new process right after the SIGKILL (a deploy, or a process manager restarting it): the previous boot of this node is gone at once, so the boot pass fails each run as owner_lost and queues attempt 2, which the new boot runs; the time includes the new process's start-up (Node + tsx + connect + migrate check)`;
  return {
    name: v.name,
    label: v.label,
    enqueuesInWorker: true,
    recoveryStandby: v.standby === 'restart' ? 'after_kill' : 'before_kill',
    ...(v.scenarios ? { scenarios: v.scenarios } : {}),
    version: 'roundtable 0.1.0 (createRuntime at this commit)',
    settings: {
      runtime: `${(v.nodes ?? 1) > 1 ? `${v.nodes} node processes on one Postgres (the worker process is node bench-a and forks ${EXTRA_NODE_IDS.slice(0, (v.nodes ?? 1) - 1).join(', ')}), each ` : ''}createRuntime on the server (src/db connect(), pool max 10), caps maxRunning 20 (recovery test: 1000), ${v.userCap === null ? 'one user, defaultUserCap = maxRunning' : `${v.users} users round-robin, defaultUserCap ${v.userCap}`}; bootLock the store handle (as the CLI), every other option its default (livenessPollMs ${RUNTIME_DEFAULTS.livenessPollMs}, reconcileMs ${RUNTIME_DEFAULTS.reconcileMs}, heartbeatMs reconcileMs/3, heartbeatStaleBeats 3, reconcileLock on: the server default); real-time clock (Date.now/setTimeout)`,
      backend: `SimulatedBackend over an in-process SimulatedCluster (2 machines) on the same clock; the job's command is the bench's \`bench <key> noop\` (exits 0 at once; the job counts as started when its exec starts)`,
      enqueue: `runtime.submit(userId, { title: key, image, command }) in the worker process: the throughput batch all at once (Promise.all, ${SUBMIT_CHUNK} in flight at a time, so concurrent submits ride one tick)${(v.nodes ?? 1) > 1 ? `, its keys spread round-robin over the ${v.nodes} nodes` : ''}, one per message for latency; the bench process forwards each batch over IPC and only reads progress from the rows`,
    },
    recovery: {
      defaultBehaviour: `the Reconciler fails or adopts runs whose owner is gone: a restarted node at its boot pass, another node as soon as its liveness watch sees the dead boot's lock freed (every ${RUNTIME_DEFAULTS.livenessPollMs} ms; the heartbeat row, ${heartbeatS * 3} s stale, is the backstop), in a pass run at once; a container still present is adopted, an absent one is failed as owner_lost and queued again as attempt 2`,
      measuredWith: `documented defaults; ${standbyText}`,
    },

    setup: migrateRoundtable,

    async client(url): Promise<QueueClient> {
      const h = await connect({ databaseUrl: url, poolMax: 2 });
      const viaWorker = (): Promise<void> =>
        Promise.reject(new Error(`${v.name} enqueues through its worker (runtime.submit)`));
      return {
        enqueueMany: viaWorker,
        enqueueOne: viaWorker,
        async pending() {
          const r = await h.db
            .selectFrom('sessions')
            .select((eb) => eb.fn.countAll<string>().as('n'))
            .where('status', 'in', ['queued', 'running'])
            .executeTakeFirstOrThrow();
          return Number(r.n);
        },
        // Failed for good: no attempt of the task is queued, running or done
        // (a failed attempt followed by a queued one is a recovery, not a failure).
        async failedKeys() {
          const rows = await h.db
            .selectFrom('tasks as t')
            .select('t.title')
            .where(({ not, exists, selectFrom }) =>
              not(
                exists(
                  selectFrom('sessions as s')
                    .select('s.id')
                    .whereRef('s.task_id', '=', 't.id')
                    .where('s.status', 'not in', ['failed', 'cancelled']),
                ),
              ),
            )
            .execute();
          return rows.map((r) => r.title);
        },
        async recoveryTimeline(killedAt, deadIds) {
          const ms = (d: Date | string | null | undefined): number =>
            d === null || d === undefined ? Number.NaN : new Date(d).getTime() - killedAt.getTime();
          const beat = await h.db
            .selectFrom('node_heartbeats')
            .select('beat_at')
            .where('owner', 'in', [...deadIds])
            .executeTakeFirst();
          const lost = await h.db
            .selectFrom('sessions')
            .select((eb) => [
              eb.fn.min('finished_at').as('first'),
              eb.fn.max('finished_at').as('last'),
            ])
            .where('failure_reason', '=', 'owner_lost')
            .executeTakeFirstOrThrow();
          const again = await h.db
            .selectFrom('sessions')
            .select((eb) => [
              eb.fn.min('started_at').as('first'),
              eb.fn.max('started_at').as('last'),
            ])
            .where('attempt', '=', 2)
            .executeTakeFirstOrThrow();
          return {
            'dead worker last heartbeat': ms(beat?.beat_at),
            'first run failed as owner_lost': ms(lost.first),
            'last run failed as owner_lost': ms(lost.last),
            'first attempt 2 started': ms(again.first),
            'last attempt 2 started': ms(again.last),
          };
        },
        close: () => h.close(),
      };
    },

    async startWorker(url, mode, onStart): Promise<WorkerHandle> {
      const nodeId =
        mode.role === 'standby' && v.standby === 'other_node'
          ? NODES.standbyOtherNode
          : NODES.primary;
      const self = await startNode(v.name, url, mode, nodeId, onStart);
      const others = await Promise.all(
        EXTRA_NODE_IDS.slice(0, (v.nodes ?? 1) - 1).map((id) =>
          startWorkerProcess(v.name, url, mode, 30_000, {
            nodeId: id,
            onStarted: (keys) => {
              for (const k of keys) onStart(k);
            },
          }),
        ),
      );
      if (others.length === 0) return self;
      const all = [self, ...others];
      return {
        ids: all.flatMap((n) => n.ids),
        async enqueue(keys) {
          // Key i through node i mod N: every node submits, every node grants.
          const parts = all.map((_, n) => keys.filter((_k, i) => i % all.length === n));
          await Promise.all(all.map((node, n) => node.enqueue(parts[n] ?? [])));
        },
        childCpu: async () => {
          const us = await Promise.all(others.map((o) => o.cpu()));
          return us.reduce((a, b) => ({ user: a.user + b.user, system: a.system + b.system }), {
            user: 0,
            system: 0,
          });
        },
        childProfiles: () => others.flatMap((o) => o.profile() ?? []),
        async stop() {
          await Promise.all(others.map((o) => o.stop()));
          await self.stop();
        },
      };
    },
  };
}

/**
 * One roundtable node in this process: its own pool, createRuntime and
 * nodeId. Used by the worker process (node A) and by nodeChild.ts (B, C).
 */
export async function startNode(
  variant: string,
  url: string,
  mode: WorkerMode & { recovery: boolean },
  nodeId: string,
  onStart: (key: string) => void,
): Promise<WorkerHandle & { enqueue(keys: readonly string[]): Promise<void> }> {
  const v = VARIANTS.find((x) => x.name === variant);
  if (v === undefined) throw new RangeError(`unknown roundtable variant ${variant}`);
  const h = await connect({ databaseUrl: url });
  const clock = realClock();
  const commands: SimCommandRegistry = {
    bench: ([key = '?', job = 'noop']) => {
      onStart(key);
      return { output: [], durationMs: job === 'hold' ? HOLD_MS : 0, exitCode: 0 };
    },
  };
  const cluster = new SimulatedCluster({ clock, nodes: ['sim-1', 'sim-2'], commands });
  let errors = 0;
  const runtime = await createRuntime({
    db: h.db,
    // As `roundtable start` runs it: each boot holds its lock, deaths are DOWNs.
    bootLock: h,
    notifications: h,
    backend: new SimulatedBackend(cluster),
    clock,
    caps: {
      maxRunning: mode.concurrency,
      defaultUserCap: v.userCap ?? mode.concurrency,
    },
    nodeId,
    onError: (e) => {
      // Another boot's orderly stop (the other nodes stop first) is a notice, not an error.
      if (e instanceof OwnerDownNotice && e.reason === 'no_beat') return;
      // Reported, never silent; a flood is cut to the first few.
      if (++errors <= 5) process.stderr.write(`${v.name} ${nodeId} runtime error: ${String(e)}\n`);
    },
  });
  // The user is the key's number mod users, so it does not depend on the node.
  const userOf = (key: string): string => `u${Number(/\d+/.exec(key)?.[0] ?? 0) % v.users}`;
  const submitOne = async (key: string): Promise<void> => {
    await runtime.submit(userOf(key), {
      title: key,
      image: 'bench',
      command: ['bench', key, mode.job],
    });
  };
  return {
    ids: [runtime.owner],
    async enqueue(keys) {
      for (let i = 0; i < keys.length; i += SUBMIT_CHUNK)
        await Promise.all(keys.slice(i, i + SUBMIT_CHUNK).map(submitOne));
    },
    async stop() {
      await runtime.stop();
      clock.clearAll();
      await h.close();
    },
  };
}

const VARIANTS: Variant[] = [];
const make = (v: Variant): BenchSystem => {
  VARIANTS.push(v);
  return makeRuntimeSystem(v);
};

export const roundtableRuntime = make({
  name: 'roundtable',
  label: 'roundtable (runtime)',
  users: 1,
  userCap: null,
  standby: 'other_node',
});

export const roundtableRuntimeCaps = make({
  name: 'roundtable-caps100',
  label: 'roundtable (runtime), caps on, 100 users',
  users: 100,
  userCap: 1,
  scenarios: ['throughput', 'latency'],
  standby: 'other_node',
});

export const roundtableRestart = make({
  name: 'roundtable-restart',
  label: 'roundtable (runtime), recovery by restarting the node',
  users: 1,
  userCap: null,
  scenarios: ['recovery'],
  standby: 'restart',
});

export const roundtableRuntimeCaps3 = make({
  name: 'roundtable-3nodes',
  label: 'roundtable (runtime), caps on, 100 users, 3 node processes',
  users: 100,
  userCap: 1,
  scenarios: ['throughput'],
  standby: 'other_node',
  nodes: 3,
});
