/**
 * What the board shows of its cards: the filter (user, status, title), the
 * per-column counts, and a page of each column, so a long line costs the
 * page the cards it draws, not the cards it holds.
 *
 * Imports nothing from `node:*`: the browser bundle includes this file.
 */
import type { BoardCard, Column, SessionStatus } from '../board/boardPort.js';
import { type BoardContext, cardsInColumn } from './boardStore.js';

/** The board's filter; empty fields match everything. */
export interface BoardFilter {
  user: string;
  status: SessionStatus | '';
  /** Case-insensitive substring of the title or the task id. */
  text: string;
}

/** A filter that keeps every card. */
export const NO_FILTER: BoardFilter = { user: '', status: '', text: '' };

/**
 * True when `card` passes `filter`.
 *
 * @example
 * ```ts
 * const card = { taskId: 't1', userId: 'ann', title: 'Build API', status: 'running' }
 * matchesFilter(card, { user: '', status: '', text: '' }) // => true
 * matchesFilter(card, { user: 'ann', status: 'running', text: 'api' }) // => true
 * matchesFilter(card, { user: 'bob', status: '', text: '' }) // => false
 * matchesFilter(card, { user: '', status: 'queued', text: '' }) // => false
 * matchesFilter(card, { user: '', status: '', text: 'T1' }) // => true
 * ```
 */
export function matchesFilter(
  card: Pick<BoardCard, 'taskId' | 'userId' | 'title' | 'status'>,
  filter: BoardFilter,
): boolean {
  if (filter.user !== '' && card.userId !== filter.user) return false;
  if (filter.status !== '' && card.status !== filter.status) return false;
  const text = filter.text.trim().toLowerCase();
  if (text === '') return true;
  return card.title.toLowerCase().includes(text) || card.taskId.toLowerCase().includes(text);
}

/** One column as drawn: the first `limit` matching cards, and how many match. */
export interface ColumnPage {
  cards: BoardCard[];
  total: number;
}

/**
 * The first `limit` cards of `column` that pass `filter`, in display order.
 *
 * @example
 * ```ts
 * const card = (taskId, position) => ({ taskId, userId: 'ann', title: taskId, status: 'queued', column: 'queued', queued: { position }, running: null, updatedAt: '' })
 * const ctx = { cards: { a: card('a', 3), b: card('b', 1), c: card('c', 2) } }
 * const page = columnPage(ctx, 'queued', { user: '', status: '', text: '' }, 2)
 * [page.cards.map((c) => c.taskId), page.total] // => [['b', 'c'], 3]
 * ```
 */
export function columnPage(
  ctx: Pick<BoardContext, 'cards'>,
  column: Column,
  filter: BoardFilter,
  limit: number,
): ColumnPage {
  const cards = cardsInColumn(ctx, column).filter((c) => matchesFilter(c, filter));
  return { cards: cards.slice(0, limit), total: cards.length };
}

/**
 * Every user with a card, sorted (the admin's user filter offers them).
 *
 * @example
 * ```ts
 * usersOf({ cards: { a: { userId: 'bob' }, b: { userId: 'ann' }, c: { userId: 'bob' } } }) // => ['ann', 'bob']
 * ```
 */
export function usersOf(ctx: Pick<BoardContext, 'cards'>): string[] {
  return [...new Set(Object.values(ctx.cards).map((c) => c.userId))].sort();
}
