/**
 * The subscribers of one view that show the same window, and what they were
 * last sent: the cards in the window, the counts and the users. After each
 * batch of changes the group works out once what its window gained, changed
 * or lost and the same `update` frame goes to every one of its sockets, so a
 * patch costs the group a window's worth of work (at most 4 × 200 cards plus
 * the watched ones), not the view's size.
 */
import type { BoardCard } from '../board/boardPort.js';
import {
  type BoardWindow,
  COLUMNS,
  type ColumnCounts,
  filterKey,
  rangeOf,
} from '../board/boardWindow.js';
import type { ColumnIndex } from './columnIndex.js';

/** What the view tells a group about itself at a flush or a snapshot. */
export interface ViewState {
  epoch: string;
  seq: number;
  users: readonly string[];
  card(taskId: string): BoardCard | undefined;
}

/**
 * The one string a window is known by: equal windows share a group.
 *
 * @example
 * ```ts
 * windowKey({}) === windowKey({ columns: { queued: { offset: 0, limit: 100 } }, watch: [] }) // => true
 * windowKey({ watch: ['b', 'a'] }) === windowKey({ watch: ['a', 'b', 'a'] }) // => true
 * windowKey({ filter: { text: 'x' } }) === windowKey({}) // => false
 * ```
 */
export function windowKey(window: BoardWindow): string {
  const ranges = COLUMNS.map((c) => {
    const r = rangeOf(window, c);
    return [r.offset, r.limit];
  });
  return JSON.stringify([filterKey(window.filter), ranges, [...new Set(window.watch)].sort()]);
}

/** Serialises a card once per card object (each change is a new object). */
const cardJson = new WeakMap<BoardCard, string>();
const jsonOf = (card: BoardCard): string => {
  let json = cardJson.get(card);
  if (json === undefined) {
    json = JSON.stringify(card);
    cardJson.set(card, json);
  }
  return json;
};

export class WindowGroup<S = unknown> {
  readonly subscribers = new Set<S>();
  private sent = new Map<string, BoardCard>();
  private counts: ColumnCounts = { queued: 0, running: 0, done: 0, failed: 0 };
  private users = '';
  private snapshot: { seq: number; frame: Buffer } | null = null;
  private readonly watch: ReadonlySet<string>;

  constructor(
    readonly key: string,
    readonly window: BoardWindow,
    readonly index: ColumnIndex,
    view: ViewState,
  ) {
    this.watch = new Set(window.watch);
    this.refresh(view);
  }

  /** True when a change to these task ids can concern the group beyond its index. */
  watches(taskIds: Iterable<string>): boolean {
    if (this.watch.size === 0) return false;
    for (const id of taskIds) if (this.watch.has(id)) return true;
    return false;
  }

  /**
   * The `update` frame that brings the group's sockets from what they were
   * sent to the window now, or null when nothing they show changed.
   */
  update(view: ViewState, usersChanged: boolean): string | null {
    const before = this.sent;
    const countsBefore = this.counts;
    const usersBefore = this.users;
    this.refresh(view);
    const cards: string[] = [];
    for (const [id, card] of this.sent) if (before.get(id) !== card) cards.push(jsonOf(card));
    const removed: string[] = [];
    for (const id of before.keys()) if (!this.sent.has(id)) removed.push(id);
    const countsMoved = COLUMNS.some((c) => countsBefore[c] !== this.counts[c]);
    const usersMoved = usersChanged && usersBefore !== this.users;
    if (cards.length === 0 && removed.length === 0 && !countsMoved && !usersMoved) return null;
    return (
      `{"type":"update","seq":${view.seq}` +
      (countsMoved ? `,"counts":${JSON.stringify(this.counts)}` : '') +
      (usersMoved ? `,"users":${this.users}` : '') +
      `,"cards":[${cards.join(',')}],"removed":${JSON.stringify(removed)}}`
    );
  }

  /** The snapshot frame of the window as last sent, serialised once per seq. */
  snapshotFrame(view: ViewState): Buffer {
    if (this.snapshot?.seq !== view.seq) {
      const cards = [...this.sent.values()].map(jsonOf).join(',');
      const frame =
        `{"type":"snapshot","epoch":${JSON.stringify(view.epoch)},"seq":${view.seq}` +
        `,"counts":${JSON.stringify(this.counts)},"users":${this.users},"cards":[${cards}]}`;
      this.snapshot = { seq: view.seq, frame: Buffer.from(frame) };
    }
    return this.snapshot.frame;
  }

  private refresh(view: ViewState): void {
    const sent = new Map<string, BoardCard>();
    for (const c of COLUMNS) {
      const { offset, limit } = rangeOf(this.window, c);
      for (const card of this.index.slice(c, offset, limit)) sent.set(card.taskId, card);
      this.counts = { ...this.counts, [c]: this.index.count(c) };
    }
    for (const id of this.watch) {
      const card = view.card(id);
      if (card !== undefined) sent.set(id, card);
    }
    this.sent = sent;
    this.users = JSON.stringify(view.users);
  }
}
