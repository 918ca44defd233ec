/**
 * The subscribers of one view that show the same window, and what they were
 * last sent: the cards in the window, the counts and the users. After each
 * batch of changes the group works out once what its window gained, changed
 * or lost and the same `update` frame goes to every one of its sockets, so a
 * patch costs the group a window's worth of work (at most 4 × 200 cards plus
 * the watched ones), not the view's size.
 *
 * Queued cards' positions are asked when the window is cut (ViewState's
 * `positionOf`, src/ui-server/linePlaces.ts), not stored on the cards: when
 * the line moves, a card whose position changed and nothing else goes out
 * as one entry of the frame's `positions` (`{taskId: position}`), not whole.
 * A queued card's `atCap` (its user holds their cap) is asked the same way
 * and moves with the same lines: when it alone changed the card goes out in
 * the frame's `atCap` (`{taskId: atCap}`), so a finish that frees a user
 * with 200 cards in the window costs ~60 bytes a card (a 36-character id
 * and `{"running":1,"max":1}`), not the whole cards.
 */
import type { BoardCard, UserAtCap } from '../board/boardPort.js';
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
  /** A queued card's position now. */
  positionOf(card: BoardCard): number;
  /** A queued card's user at their cap now (null: not). */
  atCapOf(card: BoardCard): UserAtCap | null;
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

/** Where a queued card stands now: its position, and its `atCap` (and as JSON, to compare). */
interface Place {
  position: number;
  atCap: UserAtCap | null;
  cap: string;
}

/**
 * Serialises a card with its place once per card object and place (each
 * change is a new object; a place moves when the line does).
 */
const cardJson = new WeakMap<BoardCard, Place & { json: string }>();
const jsonOf = (card: BoardCard, place: Place | undefined): string => {
  const position = place?.position ?? -1;
  const atCap = place?.atCap ?? null;
  const cap = place?.cap ?? 'null';
  let entry = cardJson.get(card);
  if (entry === undefined || entry.position !== position || entry.cap !== cap) {
    const queued = card.queued;
    // A source whose cards carry no atCap (an older one) gets none added.
    const sameCap = queued === null || JSON.stringify(queued.atCap ?? null) === cap;
    const wire =
      queued === null || (queued.position === position && sameCap)
        ? card
        : { ...card, queued: sameCap ? { ...queued, position } : { ...queued, position, atCap } };
    entry = { position, atCap, cap, json: JSON.stringify(wire) };
    cardJson.set(card, entry);
  }
  return entry.json;
};

export class WindowGroup<S = unknown> {
  readonly subscribers = new Set<S>();
  private sent = new Map<string, BoardCard>();
  /** The place each queued card in `sent` was sent with. */
  private places = new Map<string, Place>();
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

  /** True when the group shows a queued card, whose position moves with the line. */
  get showsQueued(): boolean {
    return this.places.size > 0;
  }

  /**
   * The `update` frame that brings the group's sockets from what they were
   * sent to the window now, or null when nothing they show changed.
   */
  update(view: ViewState, usersChanged: boolean): string | null {
    const before = this.sent;
    const placesBefore = this.places;
    const countsBefore = this.counts;
    const usersBefore = this.users;
    this.refresh(view);
    const cards: string[] = [];
    const moved: string[] = [];
    const capped: string[] = [];
    for (const [id, card] of this.sent) {
      const place = this.places.get(id);
      const was = placesBefore.get(id);
      if (before.get(id) !== card) cards.push(jsonOf(card, place));
      else if (place !== undefined && was !== undefined) {
        if (was.position !== place.position) moved.push(`${JSON.stringify(id)}:${place.position}`);
        if (was.cap !== place.cap) capped.push(`${JSON.stringify(id)}:${place.cap}`);
      }
    }
    const removed: string[] = [];
    for (const id of before.keys()) if (!this.sent.has(id)) removed.push(id);
    const countsMoved = COLUMNS.some((c) => countsBefore[c] !== this.counts[c]);
    const usersMoved = usersChanged && usersBefore !== this.users;
    if (
      cards.length === 0 &&
      moved.length === 0 &&
      capped.length === 0 &&
      removed.length === 0 &&
      !countsMoved &&
      !usersMoved
    )
      return null;
    return (
      `{"type":"update","seq":${view.seq}` +
      (countsMoved ? `,"counts":${JSON.stringify(this.counts)}` : '') +
      (usersMoved ? `,"users":${this.users}` : '') +
      `,"cards":[${cards.join(',')}]` +
      (moved.length > 0 ? `,"positions":{${moved.join(',')}}` : '') +
      (capped.length > 0 ? `,"atCap":{${capped.join(',')}}` : '') +
      `,"removed":${JSON.stringify(removed)}}`
    );
  }

  /** The snapshot frame of the window as last sent, serialised once per seq. */
  snapshotFrame(view: ViewState): Buffer {
    if (this.snapshot?.seq !== view.seq) {
      const cards = [...this.sent.values()]
        .map((card) => jsonOf(card, this.places.get(card.taskId)))
        .join(',');
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
    const places = new Map<string, Place>();
    for (const [id, card] of sent)
      if (card.queued !== null) {
        const atCap = view.atCapOf(card);
        places.set(id, { position: view.positionOf(card), atCap, cap: JSON.stringify(atCap) });
      }
    this.sent = sent;
    this.places = places;
    this.users = JSON.stringify(view.users);
  }
}
