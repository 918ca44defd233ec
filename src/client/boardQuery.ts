/**
 * What the board asks the server for and lays out: the filter bar's filter,
 * the page of each column it shows, and the window (src/board/boardWindow.ts)
 * those make, so a long line costs the page the cards it draws.
 *
 * Imports nothing from `node:*`: the browser bundle includes this file.
 */
import type { BoardCard, Column, SessionStatus } from '../board/boardPort.js';
import { type BoardWindow, COLUMNS } from '../board/boardWindow.js';
import { type BoardContext, cardsInColumn } from './boardStore.js';

export { matchesFilter } from '../board/boardWindow.js';

/** The filter bar's filter; empty fields match everything. */
export interface BoardFilter {
  user: string;
  status: SessionStatus | '';
  /** Case-insensitive substring of the title or the task id. */
  text: string;
}

/** A filter that keeps every card. */
export const NO_FILTER: BoardFilter = { user: '', status: '', text: '' };

/** Where each column's page starts (0-based). */
export type ColumnOffsets = Record<Column, number>;

/** Every column at its first page. */
export const FIRST_PAGES: ColumnOffsets = { queued: 0, running: 0, done: 0, failed: 0 };

/**
 * Cards drawn per column: one page. Here, not in the columns' component, so
 * the page's inline early socket (src/client/earlySocket.ts) asks for the
 * same first window as the columns.
 */
export const PAGE_SIZE = 100;

/**
 * The window of a board showing a page of `pageSize` cards per column from
 * `offsets`, under `filter`.
 *
 * @example
 * ```ts
 * const w = boardWindow({ user: '', status: '', text: 'api' }, { queued: 200, running: 0, done: 0, failed: 0 }, 100)
 * w.columns.queued // => { offset: 200, limit: 100 }
 * w.filter // => { text: 'api' }
 * boardWindow({ user: '', status: '', text: '' }, { queued: 0, running: 0, done: 0, failed: 0 }, 100).filter // => {}
 * ```
 */
export function boardWindow(
  filter: BoardFilter,
  offsets: ColumnOffsets,
  pageSize: number,
): BoardWindow & { columns: NonNullable<BoardWindow['columns']> } {
  const f: NonNullable<BoardWindow['filter']> = {};
  if (filter.user !== '') f.user = filter.user;
  if (filter.status !== '') f.status = filter.status;
  if (filter.text.trim() !== '') f.text = filter.text;
  const columns = Object.fromEntries(
    COLUMNS.map((c) => [c, { offset: offsets[c], limit: pageSize }]),
  ) as Record<Column, { offset: number; limit: number }>;
  return { filter: f, columns };
}

/**
 * The window the board's columns ask for first: every column's first page, no filter.
 *
 * @example
 * ```ts
 * firstWindow().columns.done // => { offset: 0, limit: 100 }
 * ```
 */
export function firstWindow(): BoardWindow & { columns: NonNullable<BoardWindow['columns']> } {
  return boardWindow(NO_FILTER, FIRST_PAGES, PAGE_SIZE);
}

/**
 * The window of a page that follows one task and shows no column (a job page).
 *
 * @example
 * ```ts
 * watchWindow('t7') // => { columns: { queued: { offset: 0, limit: 0 }, running: { offset: 0, limit: 0 }, done: { offset: 0, limit: 0 }, failed: { offset: 0, limit: 0 } }, watch: ['t7'] }
 * ```
 */
export function watchWindow(taskId: string): BoardWindow {
  const none = { offset: 0, limit: 0 };
  return {
    columns: { queued: none, running: none, done: none, failed: none },
    watch: [taskId],
  };
}

/** One column as drawn: the cards of its page, and how many match in all. */
export interface ColumnPage {
  cards: readonly BoardCard[];
  total: number;
}

/**
 * The page of `column` the client holds, and the column's count.
 *
 * @example
 * ```ts
 * const card = (taskId, position) => ({ taskId, userId: 'ann', title: taskId, status: 'queued', column: 'queued', queued: { position }, running: null, updatedAt: '' })
 * const ctx = { cards: { a: card('a', 3), b: card('b', 1) }, counts: { queued: 5000, running: 0, done: 0, failed: 0 } }
 * const page = columnPage(ctx, 'queued')
 * [page.cards.map((c) => c.taskId), page.total] // => [['b', 'a'], 5000]
 * ```
 */
export function columnPage(
  ctx: Pick<BoardContext, 'cards' | 'counts'>,
  column: Column,
): ColumnPage {
  return { cards: cardsInColumn(ctx, column), total: ctx.counts[column] };
}
