/**
 * One card of the board: what the index keeps per task (`BoardEntry`), how
 * it renders (`toCard`), and which of two rows of its session is the later
 * one (`isNewer`). Pure: the index (src/actors/runtimeBoard.ts) owns the
 * entries and calls these.
 */
import type { UserAtCap } from '../board/boardCard.js';
import type { Session, TaskSummary } from '../db/index.js';
import { capLine } from '../machines/outputTail.js';
import type { RuntimeCard, RuntimeColumn } from './runtimeTypes.js';

/** Most output lines a card carries, and the longest line before it is cut. */
export const CARD_OUTPUT_LINES = 20;
export const CARD_LINE_CHARS = 500;
export const CARD_OUTPUT = { lines: CARD_OUTPUT_LINES, chars: CARD_LINE_CHARS };

/** What the board keeps of one task. */
export interface BoardEntry {
  task: TaskSummary;
  session: Session;
  lines: readonly string[];
  /** An unfinished last line's head (machines/outputTail.ts); '' once the run ended. */
  partial: string;
  /** The position last emitted for a queued card. */
  position: number | null;
  /** The stored output was looked for already (a finished card after a restart). */
  restored: boolean;
  /**
   * `lines` are another node's shared tail of a run held there
   * (src/actors/liveTailShare.ts): the stored output replaces them once the
   * run ended, and the first chunk streamed here (an adoption) starts over.
   */
  shared?: boolean;
  /** Why the task's previous attempt ended, when this is a later attempt. */
  previous: { attempt: number; reason: string } | null;
  /** The tick its session row is exact as of (ApplyOptions.asOf); null: unknown. */
  asOf?: number | null;
}

/**
 * The column a session's status puts its card in.
 *
 * @example
 * ```ts
 * columnOf({ status: 'queued' }) // => 'queued'
 * columnOf({ status: 'succeeded' }) // => 'done'
 * columnOf({ status: 'cancelled' }) // => 'failed'
 * ```
 */
export function columnOf(s: Pick<Session, 'status'>): RuntimeColumn {
  return s.status === 'queued'
    ? 'queued'
    : s.status === 'running'
      ? 'running'
      : s.status === 'succeeded'
        ? 'done'
        : 'failed';
}

/** Cuts a line to the card's limit, marking the cut. */
export function cutLine(line: string): string {
  return capLine(line, CARD_LINE_CHARS);
}

/** queued < running < a final status: the order a session's statuses come in. */
const stage = (s: Session): number => (s.status === 'queued' ? 0 : s.status === 'running' ? 1 : 2);

/**
 * Whether `next` is a later version of the card's session than `prev`.
 * Rows only move forward (attempt, then epoch, then status, then time), so a
 * read or write that answers late can never put an older row back.
 *
 * @example
 * ```ts
 * const row = (attempt: number, epoch: number, status: string, at: number) => ({ attempt, epoch, status, updatedAt: new Date(at) }) as never;
 * isNewer(row(1, 1, 'running', 5), row(1, 1, 'succeeded', 5)) // => true
 * isNewer(row(1, 1, 'succeeded', 5), row(1, 1, 'running', 9)) // => false
 * isNewer(row(1, 2, 'running', 5), row(1, 1, 'running', 9)) // => false
 * isNewer(row(1, 1, 'failed', 5), row(2, 0, 'queued', 6)) // => true
 * isNewer(row(1, 1, 'running', 5), row(1, 1, 'running', 5)) // => true
 * ```
 */
export function isNewer(prev: Session, next: Session): boolean {
  return (
    (next.attempt - prev.attempt ||
      next.epoch - prev.epoch ||
      stage(next) - stage(prev) ||
      next.updatedAt.getTime() - prev.updatedAt.getTime() ||
      1) > 0
  );
}

/** The board's order: oldest task first, ties by id. */
export const byBoardOrder = (a: BoardEntry, b: BoardEntry): number =>
  a.task.createdAt.getTime() - b.task.createdAt.getTime() || (a.task.id < b.task.id ? -1 : 1);

/**
 * A running card's times: since its grant (the claim), and until its time
 * limit stops it, counted from the same instant the runner counts from.
 *
 * @example
 * ```ts
 * const s = { claimedAt: new Date('2026-12-07T10:00:00Z'), updatedAt: new Date('2026-12-07T10:00:01Z') } as never;
 * runningSince(s, 1_800_000) // => { since: '2026-12-07T10:00:00.000Z', until: '2026-12-07T10:30:00.000Z' }
 * runningSince(s, null) // => { since: '2026-12-07T10:00:00.000Z', until: null }
 * ```
 */
export function runningSince(
  s: Pick<Session, 'claimedAt' | 'updatedAt'>,
  timeLimitMs: number | null,
): { since: string; until: string | null } {
  const since = s.claimedAt ?? s.updatedAt;
  return {
    since: since.toISOString(),
    until: timeLimitMs === null ? null : new Date(since.getTime() + timeLimitMs).toISOString(),
  };
}

/**
 * The card of `e`, at `position` when it is queued, its user at their cap
 * or not as `atCap` says (a card at position 0 holds a runner already: never at cap).
 */
export function toCard(
  e: BoardEntry,
  position: number | null,
  atCap: UserAtCap | null,
): RuntimeCard {
  const s = e.session;
  const lines = e.partial === '' ? e.lines : [...e.lines, cutLine(e.partial)];
  return {
    taskId: e.task.id,
    userId: e.task.userId,
    title: e.task.title,
    column: columnOf(s),
    sessionId: s.id,
    attempt: s.attempt,
    status: s.status,
    queued:
      s.status === 'queued'
        ? {
            position: position ?? 1,
            since: s.enqueuedAt.toISOString(),
            atCap: position === 0 ? null : atCap,
          }
        : null,
    running: s.status === 'running' ? runningSince(s, e.task.timeLimitMs) : null,
    failure:
      s.status === 'failed'
        ? { reason: s.failureReason ?? 'unknown', recoverable: s.userRecoverable }
        : null,
    exitCode: s.exitCode,
    lastOutput: lines.slice(-CARD_OUTPUT_LINES),
    previous: e.previous,
    timeLimitMs: e.task.timeLimitMs,
    updatedAt: new Date(Math.max(s.updatedAt.getTime(), e.task.updatedAt.getTime())).toISOString(),
  };
}
