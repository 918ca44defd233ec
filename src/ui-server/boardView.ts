/**
 * One view of the board (one user, or the admin's view of everyone) and what
 * is shared by every socket of it: its cards, indexed per column (one index
 * per filter in use), the groups of sockets showing the same window, the
 * subscribe budget and the unsent-bytes budget. Budgets are the view's, not a
 * socket's, because a user who opens more sockets must not get more of the
 * node: 30 sockets × 40 subscribes on a 400-card board used to stall the
 * event loop for seconds inside per-socket limits.
 */
import type { WebSocket } from 'ws';
import type { BoardCard } from '../board/boardPort.js';
import { type BoardWindow, filterKey, matchesFilter } from '../board/boardWindow.js';
import { ColumnIndex, REBUILD_SHARE } from './columnIndex.js';
import type { LinePlaces } from './linePlaces.js';
import {
  type BucketLimits,
  fullBucket,
  msUntilToken,
  type TokenBucket,
  take,
} from './tokenBucket.js';
import { type ViewState, WindowGroup, windowKey } from './windowGroup.js';

/** One board socket as the hub keeps it. */
export interface BoardConnection {
  ws: WebSocket;
  view: BoardView;
  /** The window it subscribed to; null before its first subscribe is served. */
  group: WindowGroup<BoardConnection> | null;
  /** The socket's own frame budget (flood limit). */
  bucket: TokenBucket;
  strikes: number;
  alive: boolean;
  /** The cut that follows a 4008 close, if one was given. */
  closeTimer: unknown;
}

/** A subscribe that waits for the view's budget: the latest one per socket, in arrival order. */
type Pending = Map<BoardConnection, BoardWindow>;

/** A view's shared state. */
export class BoardView {
  /** Every open socket of the view, subscribed or not (they all share the byte budget). */
  readonly connections = new Set<BoardConnection>();
  readonly pending: Pending = new Map();
  /** The timer that serves `pending` when the budget refills. */
  drainTimer: unknown = null;
  /** Counts the view's flushes that changed something: the `seq` of its frames. */
  private seq = 0;
  private readonly cards = new Map<string, BoardCard>();
  /** Changes not yet flushed, by task id (the latest wins; null: the card left the board). */
  private readonly changes = new Map<string, BoardCard | null>();
  private readonly userCards = new Map<string, number>();
  private users: string[] = [];
  /** Every card, and one index per filter some group uses (the key '' is every card). */
  private readonly indexes = new Map<string, { index: ColumnIndex; groups: number }>();
  private readonly groups = new Map<string, WindowGroup<BoardConnection>>();
  private bucket: TokenBucket;

  constructor(
    readonly userId: string | null,
    readonly epoch: string,
    cards: readonly BoardCard[],
    private readonly subscribeLimits: BucketLimits,
    now: number,
    private readonly places: LinePlaces,
  ) {
    for (const card of cards) this.cards.set(card.taskId, card);
    for (const card of cards) this.countUser(card.userId, 1);
    this.users = [...this.userCards.keys()].sort();
    this.indexes.set('', { index: this.newIndex(() => true, cards), groups: 0 });
    this.bucket = fullBucket(subscribeLimits, now);
  }

  /** Sockets subscribed to some window. */
  get subscribed(): number {
    let n = 0;
    for (const g of this.groups.values()) n += g.subscribers.size;
    return n;
  }

  /** Takes a card's new state; the next flush applies it. */
  change(card: BoardCard): void {
    this.changes.set(card.taskId, card);
  }

  /** The card left the board (retention); the next flush removes it, if the view holds it. */
  drop(taskId: string): void {
    if (this.cards.has(taskId) || this.changes.has(taskId)) this.changes.set(taskId, null);
  }

  /**
   * Applies the changes to the view's indexes and returns, for each group
   * whose window they touched, the `update` frame for its sockets. With
   * `lineMoved` (positions moved), every group that shows a queued card too.
   */
  flush(lineMoved = false): Array<{ group: WindowGroup<BoardConnection>; frame: string }> {
    if (this.changes.size === 0) {
      // Only a move of the line: no frame (and no seq) unless a window shows the line.
      if (!lineMoved) return [];
      let shown = false;
      for (const g of this.groups.values()) shown ||= g.showsQueued;
      if (!shown) return [];
    }
    const changed: BoardCard[] = [];
    const removed: string[] = [];
    let usersChanged = false;
    for (const [taskId, card] of this.changes) {
      const prev = this.cards.get(taskId);
      if (card === null) {
        if (prev === undefined) continue;
        this.cards.delete(taskId);
        removed.push(taskId);
        usersChanged = this.countUser(prev.userId, -1) || usersChanged;
        continue;
      }
      changed.push(card);
      this.cards.set(taskId, card);
      if (prev?.userId === card.userId) continue;
      if (prev !== undefined) usersChanged = this.countUser(prev.userId, -1) || usersChanged;
      usersChanged = this.countUser(card.userId, 1) || usersChanged;
    }
    this.changes.clear();
    if (usersChanged) this.users = [...this.userCards.keys()].sort();
    const touched = new Set<ColumnIndex>();
    for (const { index } of this.indexes.values()) {
      if (index.apply(changed, removed).size > 0) touched.add(index);
    }
    this.seq += 1;
    const out: Array<{ group: WindowGroup<BoardConnection>; frame: string }> = [];
    const ids = [...changed.map((c) => c.taskId), ...removed];
    const state = this.state();
    for (const group of this.groups.values()) {
      const concerned =
        touched.has(group.index) ||
        group.watches(ids) ||
        usersChanged ||
        (lineMoved && group.showsQueued);
      if (!concerned) continue;
      const frame = group.update(state, usersChanged);
      if (frame !== null) out.push({ group, frame });
    }
    return out;
  }

  /**
   * Moves `conn` to the group of `window` (made, with its filter's index,
   * if it is the first) and returns the snapshot frame for it. Callers flush
   * first, so the snapshot and the group's next update start from one state.
   */
  join(conn: BoardConnection, window: BoardWindow): Buffer {
    this.leave(conn);
    const key = windowKey(window);
    let group = this.groups.get(key);
    if (group === undefined) {
      const fk = filterKey(window.filter);
      let entry = this.indexes.get(fk);
      if (entry === undefined) {
        const filter = window.filter ?? {};
        entry = {
          index: this.newIndex((c) => matchesFilter(c, filter), this.cards.values()),
          groups: 0,
        };
        this.indexes.set(fk, entry);
      }
      entry.groups += 1;
      group = new WindowGroup<BoardConnection>(key, window, entry.index, this.state());
      this.groups.set(key, group);
    }
    group.subscribers.add(conn);
    conn.group = group;
    return group.snapshotFrame(this.state());
  }

  /** Takes one subscribe from the view's budget. */
  takeSubscribe(now: number): boolean {
    const taken = take(this.bucket, this.subscribeLimits, now);
    this.bucket = taken.bucket;
    return taken.allowed;
  }

  /** When the next subscribe fits the budget. */
  msUntilSubscribe(now: number): number {
    return msUntilToken(this.bucket, this.subscribeLimits, now);
  }

  /** Bytes queued over every socket of the view. */
  buffered(): number {
    let total = 0;
    for (const c of this.connections) total += c.ws.bufferedAmount;
    return total;
  }

  /**
   * The sockets to close so the view's unsent bytes fit `budget`: the ones
   * furthest behind first, so a reader that keeps up is the last to go.
   */
  overBudget(budget: number): BoardConnection[] {
    let total = this.buffered();
    if (total <= budget) return [];
    const slowest = [...this.connections].sort((a, b) => b.ws.bufferedAmount - a.ws.bufferedAmount);
    const out: BoardConnection[] = [];
    for (const c of slowest) {
      if (total <= budget) break;
      total -= c.ws.bufferedAmount;
      out.push(c);
    }
    return out;
  }

  /** Drops every waiting subscribe and its timer (the server is closing). */
  stopWaiting(clock: { clearTimeout(handle: unknown): void }): void {
    clock.clearTimeout(this.drainTimer);
    this.drainTimer = null;
    this.pending.clear();
  }

  /** Forgets a socket. */
  remove(conn: BoardConnection): void {
    this.connections.delete(conn);
    this.pending.delete(conn);
    this.leave(conn);
  }

  /** Takes `conn` out of its group; a group left empty goes, and its filter's index with its last group. */
  private leave(conn: BoardConnection): void {
    const group = conn.group;
    if (group === null) return;
    conn.group = null;
    group.subscribers.delete(conn);
    if (group.subscribers.size > 0) return;
    this.groups.delete(group.key);
    const fk = filterKey(group.window.filter);
    const entry = this.indexes.get(fk);
    if (entry === undefined) return;
    entry.groups -= 1;
    if (entry.groups === 0 && fk !== '') this.indexes.delete(fk);
  }

  private newIndex(accepts: (card: BoardCard) => boolean, cards: Iterable<BoardCard>) {
    return new ColumnIndex(accepts, cards, REBUILD_SHARE, (c) => this.places.order(c));
  }

  private state(): ViewState {
    return {
      epoch: this.epoch,
      seq: this.seq,
      users: this.users,
      card: (id) => this.cards.get(id),
      positionOf: (card) => this.places.positionOf(card),
      atCapOf: (card) => this.places.atCapOf(card),
    };
  }

  /** Adds `by` to a user's card count; true when the user appeared or went. */
  private countUser(userId: string, by: number): boolean {
    const n = (this.userCards.get(userId) ?? 0) + by;
    if (n <= 0) this.userCards.delete(userId);
    else this.userCards.set(userId, n);
    return n === 0 || n === by;
  }
}
