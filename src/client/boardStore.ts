/**
 * The board's read model, an `@xstate/store`: the cards of the window the
 * client subscribed to (src/board/boardWindow.ts), every column's count,
 * where the stream stands (epoch and sequence number) and the connection
 * state. The page renders from it; tests assert on it.
 */
import { createStore } from '@xstate/store';
import type { BoardCard, Column, UserAtCap } from '../board/boardPort.js';
import { type ColumnCounts, orderOf } from '../board/boardWindow.js';

/** The read model's context. */
export interface BoardContext {
  /** The cards in the window (and the watched ones), by task id. */
  cards: Record<string, BoardCard>;
  /** Every column's count under the window's filter (the cards not sent included). */
  counts: ColumnCounts;
  /** Users with cards in the view. */
  users: string[];
  /** Stream identity and the seq of the last frame applied. */
  epoch: string | null;
  seq: number;
  connection: 'connecting' | 'live' | 'offline' | 'closed';
  /** Who the server says we are; `null` until hello, or for the admin. */
  userId: string | null;
  lastError: { code: string; message: string } | null;
}

/** An empty board. */
export const EMPTY_BOARD: BoardContext = {
  cards: {},
  counts: { queued: 0, running: 0, done: 0, failed: 0 },
  users: [],
  epoch: null,
  seq: 0,
  connection: 'connecting',
  userId: null,
  lastError: null,
};

/** A window's fresh state. */
export interface SnapshotEvent {
  epoch: string;
  seq: number;
  counts: ColumnCounts;
  users: string[];
  cards: BoardCard[];
}

/** What changed inside the window. */
export interface UpdateEvent {
  seq: number;
  counts?: ColumnCounts | undefined;
  users?: string[] | undefined;
  cards: BoardCard[];
  /** Cards held whose position alone moved: task id to position. */
  positions?: Record<string, number> | undefined;
  /** Cards held whose user's at-cap state alone moved: task id to `queued.atCap`. */
  atCap?: Record<string, UserAtCap | null> | undefined;
  removed: string[];
}

/** `cards` with the queued fields an update set apart from whole cards. */
function patchQueued(cards: Record<string, BoardCard>, e: UpdateEvent): void {
  for (const [id, position] of Object.entries(e.positions ?? {})) {
    const card = cards[id];
    if (card?.queued) cards[id] = { ...card, queued: { ...card.queued, position } };
  }
  for (const [id, atCap] of Object.entries(e.atCap ?? {})) {
    const card = cards[id];
    if (card?.queued) cards[id] = { ...card, queued: { ...card.queued, atCap } };
  }
}

/**
 * Creates the store. An update at or below the current `seq` (one sent for
 * the window before a snapshot replaced it) changes nothing.
 */
export function createBoardStore(context: BoardContext = EMPTY_BOARD) {
  return createStore({
    context,
    on: {
      hello: (ctx, e: { userId: string | null }) => ({ ...ctx, userId: e.userId }),
      snapshot: (ctx, e: SnapshotEvent) => ({
        ...ctx,
        epoch: e.epoch,
        seq: e.seq,
        counts: e.counts,
        users: e.users,
        cards: Object.fromEntries(e.cards.map((c) => [c.taskId, c])),
        connection: 'live' as const,
      }),
      update: (ctx, e: UpdateEvent) => {
        if (e.seq <= ctx.seq) return ctx;
        const cards = { ...ctx.cards };
        for (const id of e.removed) delete cards[id];
        for (const c of e.cards) cards[c.taskId] = c;
        patchQueued(cards, e);
        return {
          ...ctx,
          seq: e.seq,
          cards,
          counts: e.counts ?? ctx.counts,
          users: e.users ?? ctx.users,
        };
      },
      connection: (ctx, e: { state: BoardContext['connection'] }) =>
        ctx.connection === e.state ? ctx : { ...ctx, connection: e.state },
      error: (ctx, e: { code: string; message: string }) => ({
        ...ctx,
        lastError: { code: e.code, message: e.message },
      }),
    },
  });
}

/** The board store's type. */
export type BoardStore = ReturnType<typeof createBoardStore>;

// Every column cut in one pass, once per `cards` (the store replaces the
// object on every change, never edits it): a render asks for each column,
// and a re-render that changed no card (a tick, a poll) asks again.
const cut = new WeakMap<BoardContext['cards'], Record<Column, BoardCard[]>>();

/**
 * The cards of one column the client holds, in display order (the order the
 * server cut the window in). The same array for the same `ctx.cards`: not to be edited.
 *
 * @example
 * ```ts
 * const card = (taskId, column, extra) => ({ taskId, column, queued: null, running: null, updatedAt: '', ...extra })
 * const ctx = { cards: { a: card('a', 'queued', { queued: { position: 2 } }), b: card('b', 'queued', { queued: { position: 1 } }), c: card('c', 'done', {}) } }
 * cardsInColumn(ctx, 'queued').map((c) => c.taskId) // => ['b', 'a']
 * cardsInColumn(ctx, 'running') // => []
 * ```
 */
export function cardsInColumn(
  ctx: Pick<BoardContext, 'cards'>,
  column: Column,
): readonly BoardCard[] {
  let columns = cut.get(ctx.cards);
  if (columns === undefined) {
    columns = { queued: [], running: [], done: [], failed: [] };
    for (const c of Object.values(ctx.cards)) columns[c.column].push(c);
    for (const [col, cards] of Object.entries(columns)) cards.sort(orderOf(col as Column));
    cut.set(ctx.cards, columns);
  }
  return columns[column];
}
