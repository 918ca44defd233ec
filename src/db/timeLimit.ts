/**
 * A task's time limit as the store keeps it (`tasks.time_limit_ms`,
 * migration 24; what it is: src/board/timeLimit.ts): on the task, so every
 * attempt, and a run adopted after a deploy, has the same limit. A grant
 * carries it beside its rows; an adopter reads it.
 */
import { sql } from 'kysely';
import { MIN_TIME_LIMIT_MS } from '../board/timeLimit.js';
import { CorruptRowError } from './errors.js';
import type { Db } from './transaction.js';

export {
  MAX_TIME_LIMIT_MS,
  MIN_TIME_LIMIT_MS,
  TIMED_OUT,
  timeLimitMs,
} from '../board/timeLimit.js';

/**
 * The limit a reply carries beside a task's row (`limit`: a grant's pair,
 * a change, an outcome with its task): null when the task has none, or
 * when an older function sent no such key. The row itself keeps the
 * array shape older nodes check by length.
 *
 * @example
 * ```ts
 * limitOfPair({ limit: 60000 }) // => 60000
 * limitOfPair({ limit: null }) // => null
 * limitOfPair({}) // => null
 * limitOfPair({ limit: 'soon' }) // throws DB_CORRUPT_ROW
 * ```
 */
export function limitOfPair(pair: Readonly<Record<string, unknown>>): number | null {
  const v = pair.limit;
  return v === undefined || v === null ? null : limitOfRow('(reply)', v);
}

/** A `time_limit_ms` read back: a whole number of ms within the bounds, or the row is corrupt. */
export function limitOfRow(id: string, ms: unknown): number {
  if (typeof ms !== 'number' || !Number.isSafeInteger(ms) || ms < MIN_TIME_LIMIT_MS)
    throw new CorruptRowError('tasks', id, 'time_limit_ms');
  return ms;
}

/** The time limits of the tasks of `sessionIds` that have one, by session id (a runner that was not told reads it). */
export async function timeLimitsOf(
  db: Db,
  sessionIds: readonly string[],
): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  if (sessionIds.length === 0) return out;
  const { rows } = await sql<{ id: string; ms: number }>`
    SELECT s.id, t.time_limit_ms AS ms FROM sessions s JOIN tasks t ON t.id = s.task_id
    WHERE s.id = ANY(${[...sessionIds]}::text[]) AND t.time_limit_ms IS NOT NULL`.execute(db);
  for (const r of rows) out.set(r.id, limitOfRow(r.id, r.ms));
  return out;
}
