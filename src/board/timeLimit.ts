import { z } from 'zod';

/** The shortest limit: one second (a shorter one is a mistake, not a limit). */
export const MIN_TIME_LIMIT_MS = 1_000;
/** The longest: the column's integer, ~24.8 days. */
export const MAX_TIME_LIMIT_MS = 2_147_483_647;

/** The failure reason of a run failed at its time limit. */
export const TIMED_OUT = 'timed_out';

/**
 * A task's time limit (`CreateTaskInput.timeLimitMs`): how long a run of it
 * may hold its runner, counted from the grant, in milliseconds. A run past
 * it is failed as `timed_out` and stopped by the node that holds it, so a
 * hung agent cannot keep a user's slot for ever. Checked at every boundary
 * that takes one, and by the database's CHECK on `tasks.time_limit_ms`
 * (migration 24).
 *
 * @example
 * ```ts
 * timeLimitMs.safeParse(30 * 60_000).success // => true
 * timeLimitMs.safeParse(999).success // => false
 * timeLimitMs.safeParse(1500.5).success // => false
 * timeLimitMs.safeParse(MAX_TIME_LIMIT_MS + 1).success // => false
 * ```
 */
export const timeLimitMs = z
  .number()
  .int('a whole number of milliseconds')
  .min(MIN_TIME_LIMIT_MS, `at least ${MIN_TIME_LIMIT_MS} ms`)
  .max(MAX_TIME_LIMIT_MS, `at most ${MAX_TIME_LIMIT_MS} ms (~24.8 days)`);
