/**
 * The queued column's order and positions on the server, from the source's
 * line (BoardSource.line). A grant moves the position of every card behind
 * it but not their order: the server orders queued cards by their keys,
 * which stay put while a card waits, and asks a card's position only when a
 * window shows it, so a grant costs the windows' cards, not the line.
 *
 * A source without a line emits every moved card itself; its cards are
 * ordered by the position they carry, as the page orders them.
 */
import type { BoardCard, BoardLine, Column, LineKey, UserAtCap } from '../board/boardPort.js';
import { type CardOrder, orderOf } from '../board/boardWindow.js';

const byTaskId = (a: BoardCard, b: BoardCard) =>
  a.taskId < b.taskId ? -1 : a.taskId > b.taskId ? 1 : 0;

/**
 * @example
 * ```ts
 * const q = (taskId, sessionId, position) => ({ taskId, sessionId, column: 'queued', queued: { position, since: '' } })
 * const keys = { s1: { turn: 1, joinSeq: 0 }, s2: { turn: 0, joinSeq: 5 } }
 * const line = { keyOf: (c) => keys[c.sessionId] ?? null, positionOf: (c) => (c.sessionId === 's1' ? 2 : null), subscribe: () => () => {} }
 * const places = new LinePlaces(line)
 * [q('a', 's1', 9), q('b', 's2', 9), q('c', 's3', 1)].sort(places.order('queued')).map((c) => c.taskId) // => ['b', 'a', 'c']
 * places.positionOf(q('a', 's1', 9)) // => 2
 * places.positionOf(q('b', 's2', 7)) // => 7
 * new LinePlaces(undefined).positionOf(q('a', 's1', 9)) // => 9
 * const capped = { ...line, atCapOf: (c) => (c.userId === 'ann' ? { running: 1, max: 1 } : null) }
 * new LinePlaces(capped).atCapOf({ ...q('a', 's1', 9), userId: 'ann' }) // => { running: 1, max: 1 }
 * new LinePlaces(capped).atCapOf({ ...q('a', 's1', 9), userId: 'bob' }) // => null
 * new LinePlaces(line).atCapOf({ ...q('a', 's1', 9), queued: { position: 9, atCap: { running: 2, max: 2 } } }) // => { running: 2, max: 2 }
 * new LinePlaces(undefined).atCapOf(q('a', 's1', 9)) // => null
 * ```
 */
export class LinePlaces {
  /** The key each card object was first ordered by: an index finds a card by the key it placed it with. */
  private readonly keys = new WeakMap<BoardCard, LineKey | null>();
  /** Positions asked since the line last moved, by card object. */
  private positions = new Map<BoardCard, number>();
  private readonly queuedOrder: CardOrder;

  constructor(private readonly line: BoardLine | undefined) {
    const byPosition = orderOf('queued');
    this.queuedOrder = (a, b) => {
      const ka = this.keyOf(a);
      const kb = this.keyOf(b);
      if (ka !== null && kb !== null)
        return ka.turn - kb.turn || ka.joinSeq - kb.joinSeq || byTaskId(a, b);
      // A card the line has no key for (a row not yet placed by a tick) goes last.
      if (ka !== null) return -1;
      if (kb !== null) return 1;
      return byPosition(a, b);
    };
  }

  /** True when positions come from the line, not from the cards. */
  get derived(): boolean {
    return this.line !== undefined;
  }

  /** The display order the server cuts `column` in. */
  order(column: Column): CardOrder {
    return column === 'queued' ? this.queuedOrder : orderOf(column);
  }

  /** The line moved: positions asked before are stale. */
  moved(): void {
    if (this.positions.size > 0) this.positions = new Map();
  }

  /** A queued card's position now: the line's, else the one the card carries. */
  positionOf(card: BoardCard): number {
    const carried = card.queued?.position ?? 0;
    if (this.line === undefined) return carried;
    let p = this.positions.get(card);
    if (p === undefined) {
      p = this.line.positionOf(card) ?? carried;
      this.positions.set(card, p);
    }
    return p;
  }

  /**
   * A queued card's `atCap` now: the line's, else the one the card carries
   * (absent, from an older node: null). Not kept between asks: the line
   * answers from its users' lines, a lookup, where a position is a sum.
   */
  atCapOf(card: BoardCard): UserAtCap | null {
    const carried = card.queued?.atCap ?? null;
    if (this.line?.atCapOf === undefined) return carried;
    return this.line.atCapOf(card);
  }

  private keyOf(card: BoardCard): LineKey | null {
    let key = this.keys.get(card);
    if (key === undefined) {
      key = this.line?.keyOf(card) ?? null;
      this.keys.set(card, key);
    }
    return key;
  }
}
