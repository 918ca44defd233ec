/**
 * What the board shows about the pool: for each session, queued (with its
 * position and since when) or running (since when); totals; per-user counts.
 * "Asked for a runner" and "holds a runner" stay different states here, so a
 * waiting card can say it waits (DESIGN.md rule 4).
 */
import type { PoolIndex } from './poolIndex.js';

/** One session as the board sees it. */
export type PoolSessionView =
  | { sessionId: string; userId: string; state: 'queued'; position: number; since: number }
  | { sessionId: string; userId: string; state: 'running'; since: number };

/** The pool at one instant. */
export interface PoolSnapshot {
  readonly globalMax: number;
  readonly perUserMax: number;
  readonly totals: { readonly running: number; readonly queued: number };
  /** Users with work, by user id. */
  readonly users: readonly { userId: string; running: number; queued: number; cap: number }[];
  /** Running sessions (oldest first), then queued ones by position. */
  readonly sessions: readonly PoolSessionView[];
}

/**
 * Reads a snapshot out of the index. O(n log n) in the sessions it lists.
 *
 * @example
 * ```ts
 * const pool = new PoolIndex({ globalMax: 1 });
 * pool.enqueue('ann', 'a1', 10);
 * pool.enqueue('bob', 'b1', 11);
 * const snap = poolSnapshot(pool);
 * snap.totals // => { running: 1, queued: 1 }
 * snap.sessions // => [{ sessionId: 'a1', userId: 'ann', state: 'running', since: 10 }, { sessionId: 'b1', userId: 'bob', state: 'queued', position: 1, since: 11 }]
 * snap.users // => [{ userId: 'ann', running: 1, queued: 0, cap: 2 }, { userId: 'bob', running: 0, queued: 1, cap: 2 }]
 * ```
 */
export function poolSnapshot(pool: PoolIndex): PoolSnapshot {
  const running: PoolSessionView[] = [];
  const queued: (PoolSessionView & { state: 'queued' })[] = [];
  for (const [sessionId, s] of pool.entries()) {
    if (s.state === 'running')
      running.push({ sessionId, userId: s.userId, state: 'running', since: s.since });
    else {
      const position = pool.positionOf(sessionId) ?? 0;
      queued.push({ sessionId, userId: s.userId, state: 'queued', position, since: s.since });
    }
  }
  running.sort((a, b) => a.since - b.since || (a.sessionId < b.sessionId ? -1 : 1));
  queued.sort((a, b) => a.position - b.position);
  const users = [...pool.userCounts()].sort((a, b) =>
    a.userId < b.userId ? -1 : a.userId > b.userId ? 1 : 0,
  );
  const caps = pool.caps;
  return {
    globalMax: caps.globalMax,
    perUserMax: caps.perUserMax,
    totals: { running: pool.runningCount, queued: pool.queuedCount },
    users,
    sessions: [...running, ...queued],
  };
}
