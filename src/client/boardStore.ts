/**
 * The board's read model, an `@xstate/store`: the cards the server sent,
 * where the stream stands (epoch and sequence number) and the connection
 * state. The page renders from it; tests assert on it.
 */
import { createStore } from '@xstate/store';
import type { BoardCard, Column } from '../board/boardPort.js';

/** The read model's context. */
export interface BoardContext {
  cards: Record<string, BoardCard>;
  /** Stream identity and last applied sequence number; the resume point. */
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
  epoch: null,
  seq: 0,
  connection: 'connecting',
  userId: null,
  lastError: null,
};

/** Creates the store. Patches at or below the current `seq` are duplicates and change nothing. */
export function createBoardStore(context: BoardContext = EMPTY_BOARD) {
  return createStore({
    context,
    on: {
      hello: (ctx, e: { userId: string | null }) => ({ ...ctx, userId: e.userId }),
      snapshot: (ctx, e: { epoch: string; seq: number; cards: BoardCard[] }) => ({
        ...ctx,
        epoch: e.epoch,
        seq: e.seq,
        cards: Object.fromEntries(e.cards.map((c) => [c.taskId, c])),
        connection: 'live' as const,
      }),
      resumed: (ctx) => ({ ...ctx, connection: 'live' as const }),
      patch: (ctx, e: { seq: number; card: BoardCard }) =>
        e.seq <= ctx.seq
          ? ctx
          : { ...ctx, seq: e.seq, cards: { ...ctx.cards, [e.card.taskId]: e.card } },
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

const byPosition = (a: BoardCard, b: BoardCard) =>
  (a.queued?.position ?? 0) - (b.queued?.position ?? 0);
const byStart = (a: BoardCard, b: BoardCard) =>
  (a.running?.since ?? '').localeCompare(b.running?.since ?? '');
const newestFirst = (a: BoardCard, b: BoardCard) => b.updatedAt.localeCompare(a.updatedAt);

/**
 * The cards of one column in display order: the line by position, running by
 * start, finished ones newest first.
 *
 * @example
 * ```ts
 * const card = (taskId, column, extra) => ({ taskId, column, queued: null, running: null, updatedAt: '', ...extra })
 * const ctx = { cards: { a: card('a', 'queued', { queued: { position: 2 } }), b: card('b', 'queued', { queued: { position: 1 } }), c: card('c', 'done', {}) } }
 * cardsInColumn(ctx, 'queued').map((c) => c.taskId) // => ['b', 'a']
 * cardsInColumn(ctx, 'running') // => []
 * ```
 */
export function cardsInColumn(ctx: Pick<BoardContext, 'cards'>, column: Column): BoardCard[] {
  const cards = Object.values(ctx.cards).filter((c) => c.column === column);
  const order = column === 'queued' ? byPosition : column === 'running' ? byStart : newestFirst;
  return cards.sort(order);
}
