/**
 * The card: one task as the board shows it, and the limits on what it
 * carries. Rule 4 of DESIGN.md lives here: `queued` (waiting in line, with a
 * position) and `running` (holds a runner) are separate fields, and at most
 * one of them is non-null. Part of the board port (boardPort.ts); no
 * `node:*` import here: the browser client imports these types.
 */

/** The board column a card sits in. */
export type Column = 'queued' | 'running' | 'done' | 'failed';

/** Status of the card's current session (one attempt to run the task). */
export type SessionStatus = 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';

/**
 * A queued card's user holds `running` runners over the cluster and their
 * cap (their override, else the default) allows `max`: the grant order
 * skips them until one of their runs ends, whatever the card's position.
 */
export interface UserAtCap {
  running: number;
  max: number;
}

/**
 * One task as the board shows it: the task plus its latest session.
 *
 * Contract for the runtime:
 * - `queued` is non-null exactly when the session waits for a runner;
 *   `position` is 1-based within the global line (1 = first in line; a
 *   card whose user is at their cap waits for one of their runs to end,
 *   and uncapped cards behind it are granted meanwhile);
 *   0 means the pool has just granted it a runner and the claim is being
 *   written (the row still says queued): the page shows it as starting.
 *   `atCap` is non-null exactly when the card's user holds as many runners
 *   as their cap allows (the global cap being full is not being at cap),
 *   null at position 0; a card keeps it live with the user's running count.
 * - `running` is non-null exactly when the session holds a runner; its
 *   `until` is when the run will be stopped at its task's time limit
 *   (`since` plus `timeLimitMs`), null when the task has none.
 * - `failure` is non-null exactly when `status` is `failed`.
 * - `lastOutput` holds at most {@link CARD_OUTPUT_LINES} lines of at most
 *   {@link CARD_LINE_CHARS} characters; a cut line ends with `…`.
 * - `updatedAt` and every `since` are ISO-8601 UTC strings.
 */
export interface BoardCard {
  taskId: string;
  userId: string;
  title: string;
  column: Column;
  sessionId: string;
  /** 1 for the first session of a task; each retry adds one. */
  attempt: number;
  status: SessionStatus;
  /** `atCap`: absent from an older node's card (read it as null). */
  queued: { position: number; since: string; atCap?: UserAtCap | null } | null;
  /** `until`: absent from an older node's card (before time limits reached the board). */
  running: { since: string; until?: string | null } | null;
  failure: { reason: string; recoverable: boolean } | null;
  exitCode: number | null;
  lastOutput: string[];
  updatedAt: string;
  /**
   * Why the task's previous attempt ended, on an attempt after the first
   * (a re-queue after `container_replaced` keeps its place in line and says
   * why it runs again). Absent or null on a first attempt.
   */
  previous?: { attempt: number; reason: string } | null;
  /**
   * How long each run of the task may hold a runner (ms), null for no
   * limit. Absent from an older node's card.
   */
  timeLimitMs?: number | null;
}

/** Most output lines a card carries; the full log lives elsewhere. */
export const CARD_OUTPUT_LINES = 20;
/** Longest output line a card carries before it is cut (and marked with `…`). */
export const CARD_LINE_CHARS = 500;
