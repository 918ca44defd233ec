/**
 * Whether a user's queued work waits on their own cap rather than on a free
 * runner: the grant order skips a user who holds as many runners as their
 * cap allows (docs/runner-pool.md), so a card of theirs at the head of the
 * line is not next. Pure; the board shows it on every queued card.
 */

/** What the answer needs to know of one user's line. */
export interface CapLine {
  /** Sessions the user holds runners for, over every node. */
  readonly running: number;
  /** The user's effective cap (their override, else the default). */
  readonly maxRunning: number;
}

/**
 * `{ running, max }` when the user is at (or, after their cap was lowered,
 * over) their cap, else null; null too for a user the node knows no line of.
 * The global cap is not looked at: a user under their own cap while every
 * runner is taken waits for a free runner, and is not at their cap.
 *
 * @example
 * ```ts
 * userAtCap({ running: 1, maxRunning: 1 }) // => { running: 1, max: 1 }
 * userAtCap({ running: 3, maxRunning: 2 }) // => { running: 3, max: 2 }
 * userAtCap({ running: 0, maxRunning: 0 }) // => { running: 0, max: 0 }
 * userAtCap({ running: 1, maxRunning: 2 }) // => null
 * userAtCap(undefined) // => null
 * ```
 */
export function userAtCap(line: CapLine | undefined): { running: number; max: number } | null {
  if (line === undefined || line.running < line.maxRunning) return null;
  return { running: line.running, max: line.maxRunning };
}
