/**
 * The fair RunnerPool behind the runtime's `SlotPool` port
 * (src/actors/runtimePool.ts), so `createRuntime` can swap its FIFO pool for
 * this one with one line. Differences from the FIFO, by design:
 * - `enqueue` answers 0 when the session is granted at once (the issue's
 *   contract), else its position in the fair order (docs/runner-pool.md);
 * - positions and grants follow the turn order, not one global FIFO;
 * - a pool built with a `store` loads caps and rows itself before granting.
 * Grants still reach waiters on a microtask, as the port promises.
 */

import type { Grant } from '../machines/poolIndex.js';
import type { PoolStore, PoolWaiter } from './runnerPool.js';
import { startRunnerPool } from './runnerPoolClient.js';
import type { SlotPool } from './runtimePool.js';
import type { RuntimePoolSnapshot } from './runtimeTypes.js';

/** A store that starts empty: rows and caps arrive through `rebuild` and `setUserCap`. */
const emptyStore: PoolStore = {
  loadRows: async () => ({ queued: [], running: [] }),
  loadCaps: async () => new Map(),
  saveCap: async () => {},
};

export function createFairSlotPool(
  caps: { maxRunning: number; defaultUserCap: number },
  now: () => number,
  store: PoolStore = emptyStore,
  /** A grant to a session with no waiter yet (rows rebuilt before its runner re-enqueued). */
  onUnwaitedGrant?: (grant: Grant) => void,
): SlotPool {
  const enqueuedAt = new Map<string, number>();
  let samples: number[] = [];
  const { pool, actor } = startRunnerPool(store, {
    caps: { globalMax: caps.maxRunning, perUserMax: caps.defaultUserCap },
    now,
    ...(onUnwaitedGrant === undefined ? {} : { onUnwaitedGrant }),
    // The port's promise: a grant never re-enters the caller that caused it.
    deliver: (waiter, event) => {
      const since = enqueuedAt.get(event.sessionId);
      if (since !== undefined) samples.push(Math.max(0, now() - since) / 1000);
      enqueuedAt.delete(event.sessionId);
      queueMicrotask(() => waiter.send(event));
    },
  });
  let closed = false;
  const context = () => actor.getSnapshot().context;
  return {
    enqueue(userId, sessionId, waiter) {
      if (!enqueuedAt.has(sessionId) && pool.positionOf(sessionId) === null) {
        enqueuedAt.set(sessionId, now());
      }
      return pool.enqueue(userId, sessionId, waiter as PoolWaiter);
    },
    hold: (userId, sessionId, waiter) => pool.hold(userId, sessionId, waiter as PoolWaiter),
    release(sessionId) {
      enqueuedAt.delete(sessionId);
      pool.release(sessionId);
    },
    rebuild(rows) {
      // The port's rows carry no timestamps; their order is dispatch order.
      const queued = rows.queued.map((r, i) => ({ ...r, since: i }));
      const running = rows.running.map((r) => ({ ...r, since: now() }));
      actor.send({ type: 'rows', rows: { queued, running } });
    },
    setUserCap(userId, maxRunning) {
      actor.send({ type: 'set_cap', userId, max: maxRunning });
    },
    position(sessionId) {
      const p = pool.positionOf(sessionId);
      return p === 0 ? null : p;
    },
    snapshot(): RuntimePoolSnapshot {
      const index = context().index;
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
    holders: () =>
      [...context().index.entries()].filter(([, s]) => s.state === 'running').map(([id]) => id),
    drainWaitSamples() {
      const out = samples;
      samples = [];
      return out;
    },
    close() {
      if (closed) return;
      closed = true;
      pool.close();
      actor.stop();
    },
  };
}
