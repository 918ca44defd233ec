/**
 * The cards of one board view that pass one filter, kept per column in
 * display order (src/board/boardWindow.ts), so a window is a slice and a
 * count is a length: what a subscriber costs does not grow with the line.
 *
 * Changes come in batches (one turn of the loop's worth of card changes). A
 * small batch moves each card with two binary searches; a large one (a source
 * without a line renumbering every card behind a grant, a Reconciler pass)
 * rebuilds the columns it touched with one filter and one sort, which V8's
 * TimSort does in about linear time on a list that was already nearly in
 * order. With the source's line the queued column is ordered by keys, which
 * a grant does not move: it is one card out. No I/O, no clock.
 */
import type { BoardCard, Column } from '../board/boardPort.js';
import { type CardOrder, COLUMNS, orderOf } from '../board/boardWindow.js';

/** A batch at most this fraction of a column moves card by card; a larger one rebuilds it. */
export const REBUILD_SHARE = 1 / 32;

/**
 * @example
 * ```ts
 * const q = (taskId, position) => ({ taskId, column: 'queued', queued: { position }, running: null, updatedAt: '' })
 * const index = new ColumnIndex(() => true, [q('a', 2), q('b', 1)])
 * index.slice('queued', 0, 10).map((c) => c.taskId) // => ['b', 'a']
 * index.apply([q('a', 1), q('b', 2)]) // => new Set(['queued'])
 * index.slice('queued', 1, 10).map((c) => c.taskId) // => ['b']
 * index.count('queued') // => 2
 * index.apply([], ['a']) // => new Set(['queued'])
 * index.count('queued') // => 1
 * ```
 */
export class ColumnIndex {
  private readonly ids = new Map<Column, string[]>(COLUMNS.map((c) => [c, []]));
  /** The card each id was placed by: the key its place was sorted on. */
  private readonly held = new Map<string, BoardCard>();

  /**
   * @param rebuildShare the share of a column above which a batch rebuilds
   *   it (tests force either way with 0 or Infinity).
   * @param order each column's order (the server's: src/ui-server/linePlaces.ts)
   */
  constructor(
    readonly accepts: (card: BoardCard) => boolean,
    cards: Iterable<BoardCard>,
    private readonly rebuildShare = REBUILD_SHARE,
    private readonly order: (column: Column) => CardOrder = orderOf,
  ) {
    for (const card of cards) {
      if (!accepts(card)) continue;
      this.held.set(card.taskId, card);
      this.column(card.column).push(card.taskId);
    }
    for (const c of COLUMNS) this.sortColumn(c);
  }

  /** Cards in `column`. */
  count(column: Column): number {
    return this.column(column).length;
  }

  /** `limit` cards of `column` from the `offset`-th, in display order. */
  slice(column: Column, offset: number, limit: number): BoardCard[] {
    return this.column(column)
      .slice(offset, offset + limit)
      .map((id) => this.held.get(id)!);
  }

  /**
   * Takes the new state of each changed card, and drops the `removed` ones
   * (cards that left the board); returns the columns whose contents moved.
   */
  apply(changed: Iterable<BoardCard>, removed: Iterable<string> = []): Set<Column> {
    const moves: Array<{ id: string; old: BoardCard | undefined; next: BoardCard | undefined }> =
      [];
    const touched = new Map<Column, { out: BoardCard[]; in: BoardCard[] }>();
    const at = (c: Column) => {
      let t = touched.get(c);
      if (t === undefined) {
        t = { out: [], in: [] };
        touched.set(c, t);
      }
      return t;
    };
    for (const card of changed) {
      const old = this.held.get(card.taskId);
      const next = this.accepts(card) ? card : undefined;
      if (old === undefined && next === undefined) continue;
      if (old !== undefined) at(old.column).out.push(old);
      if (next !== undefined) at(next.column).in.push(next);
      moves.push({ id: card.taskId, old, next });
    }
    for (const id of removed) {
      const old = this.held.get(id);
      if (old === undefined) continue;
      at(old.column).out.push(old);
      moves.push({ id, old, next: undefined });
    }
    const rebuild = new Set<Column>();
    // Out first, each found by the key it was placed with.
    for (const [c, t] of touched) {
      const list = this.column(c);
      if (t.out.length + t.in.length > list.length * this.rebuildShare) {
        rebuild.add(c);
        const gone = new Set(t.out.map((card) => card.taskId));
        this.ids.set(
          c,
          list.filter((id) => !gone.has(id)),
        );
      } else
        for (const card of t.out) {
          const i = this.find(list, card, this.order(c));
          if (i >= 0) list.splice(i, 1);
        }
    }
    for (const m of moves) {
      if (m.next === undefined) this.held.delete(m.id);
      else this.held.set(m.id, m.next);
    }
    for (const [c, t] of touched) {
      const list = this.column(c);
      if (rebuild.has(c)) {
        for (const card of t.in) list.push(card.taskId);
        this.sortColumn(c);
      } else
        for (const card of t.in)
          list.splice(this.lowerBound(list, card, this.order(c)), 0, card.taskId);
    }
    return new Set(touched.keys());
  }

  private column(c: Column): string[] {
    return this.ids.get(c)!;
  }

  private sortColumn(c: Column): void {
    const order = this.order(c);
    this.column(c).sort((a, b) => order(this.held.get(a)!, this.held.get(b)!));
  }

  /** The first place whose card does not sort before `card`. */
  private lowerBound(list: readonly string[], card: BoardCard, order: CardOrder): number {
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      // mid < list.length, and every id in a column's list is a held card.
      if (order(this.held.get(list[mid]!)!, card) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Where `card` (as it was placed) is; the order is total, so the search lands on it. */
  private find(list: readonly string[], card: BoardCard, order: CardOrder): number {
    const i = this.lowerBound(list, card, order);
    return list[i] === card.taskId ? i : list.indexOf(card.taskId);
  }
}
