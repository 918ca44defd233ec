/**
 * Where a queued card stands. Positions are the database's order, the one
 * grants really follow over every node (DESIGN.md rule 4: the board must
 * not promise a place the dispatcher will not honour), computed from the
 * card's turn key and the users' lines (src/actors/lineBook.ts).
 */
import type { UserAtCap } from '../board/boardCard.js';
import type { Session } from '../db/index.js';
import type { LineBook } from './lineBook.js';
import type { BoardEntry } from './runtimeBoardCard.js';

/** Where the board reads positions: the node's copy of the users' lines. */
export interface BoardPositions {
  /** 0: holds a slot; n: place in line; null: unknown (no turn key). */
  placeOf(session: Session): number | null;
  /** The user's running count and cap when they are at it (their queued cards wait on it), else null. */
  atCapOf(userId: string): UserAtCap | null;
  /** Told after the lines changed (not re-entrantly safe: schedule). */
  subscribe(listener: () => void): () => void;
}

/** The board's positions from a line book. */
export function linePositions(lines: LineBook): BoardPositions {
  return {
    placeOf: (s) =>
      s.status === 'running'
        ? 0
        : s.status === 'queued' && s.turn !== null && s.joinSeq !== null
          ? lines.positionOf(s.turn, s.joinSeq)
          : null,
    atCapOf: (userId) => lines.atCapOf(userId),
    subscribe: (listener) => lines.subscribe(listener),
  };
}

/**
 * A stand-in for sessions the pool does not know (yet: before its first
 * load, or a row another node queued before this pool's next rebuild): the
 * database's first-come order among the queued sessions.
 *
 * @example
 * ```ts
 * const s = (id: string, at: number) => ({ id, enqueuedAt: new Date(at) }) as never;
 * firstComeRanks([s('b', 2), s('a', 2), s('c', 1)]) // => new Map([['c', 1], ['a', 2], ['b', 3]])
 * ```
 */
export function firstComeRanks(queued: Iterable<Session>): Map<string, number> {
  const line = [...queued].sort(
    (a, b) =>
      a.enqueuedAt.getTime() - b.enqueuedAt.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
  );
  return new Map(line.map((s, i) => [s.id, i + 1]));
}

/**
 * Task id -> position of each entry of `list`: the pool's; else the one
 * last shown; else the first-come rank among `queued()` (computed once, and
 * only when some entry needs it).
 */
export function positionsOf(
  list: Iterable<BoardEntry>,
  pool: BoardPositions | undefined,
  queued: () => Iterable<Session>,
): Map<string, number> {
  const out = new Map<string, number>();
  let ranks: Map<string, number> | undefined;
  for (const e of list) {
    const place = pool?.placeOf(e.session) ?? null;
    if (place !== null) out.set(e.task.id, place);
    else if (e.position !== null) out.set(e.task.id, e.position);
    else {
      ranks ??= firstComeRanks(queued());
      out.set(e.task.id, ranks.get(e.session.id) ?? 1);
    }
  }
  return out;
}
