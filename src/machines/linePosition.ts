/**
 * A queued session's place in the cluster-wide round-robin order, from the
 * users' line summaries alone (docs/runner-pool.md, docs/data.md).
 *
 * Every user `u` with queued work has a line: `queued(u)` sessions in the
 * contiguous turns `head(u) .. head(u) + queued(u) - 1`, all with the join
 * number `join(u)`. A session's key is `(turn, join)`, and the order is the
 * order of keys. Because a user's turns are contiguous, the number of `u`'s
 * sessions ahead of a key `(t, j)` is a clamp, not a scan:
 *
 *   ahead(u) = clamp(t - head(u) + (join(u) < j ? 1 : 0), 0, queued(u))
 *
 * and the position is 1 + the sum over users. It costs O(users with queued
 * work), whatever the depth of the queue: a node can show exact positions
 * without holding the queue. Pure.
 */

/** What a position needs to know of one user's line. */
export interface LineSummary {
  readonly headTurn: number;
  readonly queued: number;
  readonly joinSeq: number;
}

/** A queued session's key in the order. */
export interface TurnKey {
  readonly turn: number;
  readonly joinSeq: number;
}

/**
 * How many of one line's sessions are ahead of `key` (the line's own
 * session at `key` is not ahead of itself).
 *
 * @example
 * ```ts
 * const line = { headTurn: 3, queued: 4, joinSeq: 2 };
 * aheadIn(line, { turn: 3, joinSeq: 1 }) // => 0
 * aheadIn(line, { turn: 3, joinSeq: 5 }) // => 1
 * aheadIn(line, { turn: 5, joinSeq: 2 }) // => 2
 * aheadIn(line, { turn: 99, joinSeq: 0 }) // => 4
 * aheadIn(line, { turn: 0, joinSeq: 9 }) // => 0
 * ```
 */
export function aheadIn(line: LineSummary, key: TurnKey): number {
  const n = key.turn - line.headTurn + (line.joinSeq < key.joinSeq ? 1 : 0);
  return n <= 0 ? 0 : Math.min(n, line.queued);
}

/**
 * The 1-based place of the queued session with `key` among every queued
 * session of `lines` (its own line included).
 *
 * @example
 * ```ts
 * // ann joined first (join 0) with 3 queued from turn 0; bob joined next with 1.
 * const lines = [{ headTurn: 0, queued: 3, joinSeq: 0 }, { headTurn: 0, queued: 1, joinSeq: 1 }];
 * positionOf(lines, { turn: 0, joinSeq: 0 }) // => 1
 * positionOf(lines, { turn: 0, joinSeq: 1 }) // => 2
 * positionOf(lines, { turn: 1, joinSeq: 0 }) // => 3
 * positionOf(lines, { turn: 2, joinSeq: 0 }) // => 4
 * ```
 */
export function positionOf(lines: Iterable<LineSummary>, key: TurnKey): number {
  let ahead = 0;
  for (const line of lines) if (line.queued > 0) ahead += aheadIn(line, key);
  return ahead + 1;
}
