/**
 * The start estimator's input from what one viewer's board holds: its
 * cards, the pool as the server shows it to that viewer, and the server's
 * recent run durations. The page and the estimate benchmark both build it
 * here, so what is measured is what the cards show.
 *
 * Imports nothing from `node:*`: the browser bundle includes this file.
 */
import type { BoardCard, PoolSnapshot } from '../board/boardPort.js';
import type { StartEstimateInput } from './estimateStart.js';

/**
 * @example
 * ```ts
 * const pool = { maxRunning: 2, running: 2, queued: 1, users: [{ userId: 'ann', running: 1, queued: 1, maxRunning: 1 }] }
 * const run = { taskId: 'r', userId: 'ann', running: { since: '1970-01-01T00:00:01.000Z', until: '1970-01-01T00:01:01.000Z' }, queued: null }
 * const wait = { taskId: 'q', userId: 'ann', running: null, queued: { position: 1, since: '1970-01-01T00:00:02.000Z' }, timeLimitMs: 30_000 }
 * estimateInputFrom([run, wait], pool, [60_000], 5_000) // => { now: 5000, maxRunning: 2, userCaps: { ann: 1 }, running: [{ userId: 'ann', since: 1000, until: 61000 }], runningUnseen: 1, queued: [{ taskId: 'q', userId: 'ann', position: 1, limitMs: 30000 }], recentDurations: [60000] }
 * // An older node's card: no times beyond the start.
 * estimateInputFrom([{ ...run, running: { since: run.running.since } }], pool, [], 5_000).running // => [{ userId: 'ann', since: 1000, until: null }]
 * ```
 */
export function estimateInputFrom(
  cards: Iterable<Pick<BoardCard, 'taskId' | 'userId' | 'running' | 'queued' | 'timeLimitMs'>>,
  pool: PoolSnapshot,
  recentDurations: readonly number[],
  now: number,
): StartEstimateInput {
  const running: StartEstimateInput['running'][number][] = [];
  const queued: StartEstimateInput['queued'][number][] = [];
  for (const c of cards) {
    if (c.running !== null) {
      const until = c.running.until;
      running.push({
        userId: c.userId,
        since: Date.parse(c.running.since),
        until: until == null ? null : Date.parse(until),
      });
    }
    if (c.queued !== null) {
      queued.push({
        taskId: c.taskId,
        userId: c.userId,
        position: c.queued.position,
        limitMs: c.timeLimitMs ?? null,
      });
    }
  }
  return {
    now,
    maxRunning: pool.maxRunning,
    userCaps: Object.fromEntries(pool.users.map((u) => [u.userId, u.maxRunning])),
    running,
    // Runners held by cards this viewer cannot see (other users').
    runningUnseen: Math.max(0, pool.running - running.length),
    queued,
    recentDurations,
  };
}
