/**
 * What a board subscriber shows (its window): a filter, and per column a
 * range of that column's cards in display order, plus the task ids it
 * follows whatever their column (a job page). The server sends the counts of
 * every column and only the cards in the window, so a line of 100,000 costs a
 * page and the server's work for it the cards it shows.
 *
 * The display order and the filter live here because both sides use them:
 * the server to cut the windows, the page to lay out what it was sent.
 * Imports nothing from `node:*`: the browser bundle includes this file.
 */
import type { BoardCard, Column, SessionStatus } from './boardPort.js';

/** The columns, in the order the board draws them. */
export const COLUMNS: readonly Column[] = ['queued', 'running', 'done', 'failed'];

/** The board's filter; empty or absent fields match everything. */
export interface BoardFilter {
  user?: string;
  status?: SessionStatus | '';
  /** Case-insensitive substring of the title or the task id. */
  text?: string;
}

/** A range of one column: `limit` cards from the `offset`-th (0-based). */
export interface ColumnRange {
  offset: number;
  limit: number;
}

/** A subscriber's window. Absent columns get {@link DEFAULT_RANGE}. */
export interface BoardWindow {
  filter?: BoardFilter;
  columns?: Partial<Record<Column, ColumnRange>>;
  /** Task ids sent whatever their column or the filter (a job page follows its task). */
  watch?: string[];
}

/** Most cards one column's range may ask for. */
export const MAX_RANGE_LIMIT = 200;
/** Most task ids one window may watch. */
export const MAX_WATCH = 20;
/** A column's range when the window names none: its first 100 cards. */
export const DEFAULT_RANGE: ColumnRange = { offset: 0, limit: 100 };

/** Cards per column, under the window's filter. */
export type ColumnCounts = Record<Column, number>;

/**
 * True when `card` passes `filter`.
 *
 * @example
 * ```ts
 * const card = { taskId: 't1', userId: 'ann', title: 'Build API', status: 'running' }
 * matchesFilter(card, {}) // => true
 * matchesFilter(card, { user: 'ann', status: 'running', text: 'api' }) // => true
 * matchesFilter(card, { user: 'bob' }) // => false
 * matchesFilter(card, { status: 'queued' }) // => false
 * matchesFilter(card, { text: 'T1' }) // => true
 * ```
 */
export function matchesFilter(
  card: Pick<BoardCard, 'taskId' | 'userId' | 'title' | 'status'>,
  filter: BoardFilter,
): boolean {
  if (filter.user && card.userId !== filter.user) return false;
  if (filter.status && card.status !== filter.status) return false;
  const text = (filter.text ?? '').trim().toLowerCase();
  if (text === '') return true;
  return card.title.toLowerCase().includes(text) || card.taskId.toLowerCase().includes(text);
}

/**
 * The filter in one canonical string (empty for "everything"), so equal
 * filters share one index on the server.
 *
 * @example
 * ```ts
 * filterKey({}) // => ''
 * filterKey({ user: '', status: '', text: '  ' }) // => ''
 * filterKey({ text: ' API ', user: 'ann' }) // => '["ann","","api"]'
 * ```
 */
export function filterKey(filter: BoardFilter | undefined): string {
  const user = filter?.user ?? '';
  const status = filter?.status ?? '';
  const text = (filter?.text ?? '').trim().toLowerCase();
  return user === '' && status === '' && text === '' ? '' : JSON.stringify([user, status, text]);
}

/** A strict total order of one column's cards (task id breaks every tie). */
export type CardOrder = (a: BoardCard, b: BoardCard) => number;

// The times are ISO-8601 in UTC (toISOString), which sort as text by code
// unit. Not localeCompare: its first call builds a collator, 8 ms of the
// board page's first render on a busy machine, and it orders by locale rules
// the times do not need.
const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const byTaskId = (a: BoardCard, b: BoardCard) => byText(a.taskId, b.taskId);

const ORDERS: Record<Column, CardOrder> = {
  // The line in the order grants follow (0, "starting", first).
  queued: (a, b) => (a.queued?.position ?? 0) - (b.queued?.position ?? 0) || byTaskId(a, b),
  running: (a, b) => byText(a.running?.since ?? '', b.running?.since ?? '') || byTaskId(a, b),
  done: (a, b) => byText(b.updatedAt, a.updatedAt) || byTaskId(a, b),
  failed: (a, b) => byText(b.updatedAt, a.updatedAt) || byTaskId(a, b),
};

/**
 * The display order of a column: the line by position, running by start,
 * finished ones newest first.
 *
 * @example
 * ```ts
 * const q = (taskId, position) => ({ taskId, queued: { position } })
 * [q('a', 2), q('b', 1), q('c', 2)].sort(orderOf('queued')).map((c) => c.taskId) // => ['b', 'a', 'c']
 * ```
 */
export function orderOf(column: Column): CardOrder {
  return ORDERS[column];
}

/**
 * The range a window gives `column`.
 *
 * @example
 * ```ts
 * rangeOf({ columns: { queued: { offset: 100, limit: 50 } } }, 'queued') // => { offset: 100, limit: 50 }
 * rangeOf({}, 'done') // => { offset: 0, limit: 100 }
 * ```
 */
export function rangeOf(window: BoardWindow, column: Column): ColumnRange {
  return window.columns?.[column] ?? DEFAULT_RANGE;
}
