/**
 * The fair RunnerPool behind the runtime's `SlotPool` port
 * (src/actors/runtimePool.ts). The pool actor itself belongs to a
 * supervisor: the runtime puts `start` (logic and input) in its root's
 * child spec and passes `actorOf` to find the current incarnation, so a
 * restart is invisible to callers. Without `actorOf` the adapter starts a
 * private actor of its own (tests, scripts).
 *
 * - `enqueue` answers 0 when the session is granted at once, else its
 *   position in the fair order (docs/runner-pool.md); `null` while the pool
 *   is down between a crash and its restart (the runtime re-attaches every
 *   live runner when the new pool starts, so nothing is lost);
 * - grants reach waiters on a microtask, as the port promises;
 * - a pool with a `store` loads caps and rows itself before granting.
 */
import { type AnyActorRef, createActor } from 'xstate';
import type { Grant, PoolIndex, PoolRow } from '../machines/poolIndex.js';
import type { PoolStore, PoolWaiter, RunnerPoolInput, RunnerSlotEvent } from './runnerPool.js';
import { RunnerPool, runnerPoolLogic } from './runnerPoolClient.js';
import type { SlotPool } from './runtimePool.js';
import type { RuntimePoolSnapshot } from './runtimeTypes.js';

/** A store that starts empty: rows and caps arrive through `rebuild` and `setUserCap`. */
const emptyStore: PoolStore = {
  loadRows: async () => ({ queued: [], running: [] }),
  loadCaps: async () => new Map(),
  saveCap: async () => {},
};

/** The adapter, plus what a child spec needs to start the pool actor. */
export interface FairSlotPool extends SlotPool {
  readonly start: { logic: ReturnType<typeof runnerPoolLogic>; input: RunnerPoolInput };
}

export function createFairSlotPool(
  caps: { maxRunning: number; defaultUserCap: number },
  now: () => number,
  store: PoolStore = emptyStore,
  /** A grant to a session with no waiter yet (rows rebuilt before its runner re-enqueued). */
  onUnwaitedGrant?: (grant: Grant) => void,
  /** The supervised pool actor's current incarnation; omitted: a private actor. */
  actorOf?: () => AnyActorRef | undefined,
): FairSlotPool {
  const enqueuedAt = new Map<string, number>();
  let samples: number[] = [];
  let closed = false;
  const listeners = new Set<() => void>();
  const input: RunnerPoolInput = {
    caps: { globalMax: caps.maxRunning, perUserMax: caps.defaultUserCap },
    now,
    ...(onUnwaitedGrant === undefined ? {} : { onUnwaitedGrant }),
    // Every incarnation shares this input, so a restart keeps the listeners.
    onChange: () => {
      if (!closed) for (const l of listeners) l();
    },
    // The port's promise: a grant never re-enters the caller that caused it.
    deliver: (waiter: PoolWaiter, event: RunnerSlotEvent) => {
      const since = enqueuedAt.get(event.sessionId);
      if (since !== undefined) samples.push(Math.max(0, now() - since) / 1000);
      enqueuedAt.delete(event.sessionId);
      queueMicrotask(() => {
        if (!closed) waiter.send(event);
      });
    },
  };
  const logic = runnerPoolLogic(store);
  const own = actorOf === undefined ? createActor(logic, { input }).start() : undefined;
  const current = (): AnyActorRef | undefined => {
    const ref = own ?? actorOf?.();
    return ref !== undefined && ref.getSnapshot().status === 'active' ? ref : undefined;
  };
  const client = new RunnerPool(() => current() as AnyActorRef, store, now);
  /** Runs `fn` on the live pool; while it is down the call is dropped (see the file comment). */
  const withPool = <T>(fn: () => T, otherwise: T): T =>
    closed || current() === undefined ? otherwise : fn();
  const context = () =>
    (current()?.getSnapshot() as { context: { index: PoolIndex } } | undefined)?.context;

  return {
    start: { logic, input },
    enqueue(userId, sessionId, waiter) {
      return withPool(() => {
        if (!enqueuedAt.has(sessionId) && client.positionOf(sessionId) === null) {
          enqueuedAt.set(sessionId, now());
        }
        return client.enqueue(userId, sessionId, waiter as PoolWaiter);
      }, null);
    },
    hold: (userId, sessionId, waiter) =>
      withPool(() => client.hold(userId, sessionId, waiter as PoolWaiter), undefined),
    release(sessionId) {
      enqueuedAt.delete(sessionId);
      withPool(() => client.release(sessionId), undefined);
    },
    rebuild(rows) {
      const at = now();
      const stamp = (r: { sessionId: string; userId: string; since?: number }): PoolRow => ({
        sessionId: r.sessionId,
        userId: r.userId,
        since: r.since ?? at,
      });
      withPool(
        () =>
          current()?.send({
            type: 'rows',
            rows: { queued: rows.queued.map(stamp), running: rows.running.map(stamp) },
          }),
        undefined,
      );
    },
    reload: () => withPool(() => client.rebuild(), undefined),
    setUserCap(userId, maxRunning) {
      withPool(() => current()?.send({ type: 'set_cap', userId, max: maxRunning }), undefined);
    },
    position(sessionId) {
      const p = withPool(() => client.positionOf(sessionId), null);
      return p === 0 ? null : p;
    },
    placeOf: (sessionId) => withPool(() => client.positionOf(sessionId), null),
    snapshot(): RuntimePoolSnapshot {
      const index = context()?.index;
      if (index === undefined) {
        return { maxRunning: caps.maxRunning, running: 0, queued: 0, users: [] };
      }
      const overrides = index.caps.overrides;
      const users = [...index.userCounts()]
        .sort((a, b) => a.userId.localeCompare(b.userId))
        .map((u) => ({
          userId: u.userId,
          running: u.running,
          queued: u.queued,
          maxRunning: overrides.get(u.userId) ?? null,
        }));
      return {
        maxRunning: caps.maxRunning,
        running: index.runningCount,
        queued: index.queuedCount,
        users,
      };
    },
    holders: () => {
      const index = context()?.index;
      if (index === undefined) return [];
      return [...index.entries()].filter(([, s]) => s.state === 'running').map(([id]) => id);
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    drainWaitSamples() {
      const out = samples;
      samples = [];
      return out;
    },
    close() {
      if (closed) return;
      if (current() !== undefined) client.close();
      closed = true;
      own?.stop();
    },
  };
}
