/**
 * What ticks changed, as SQL fragments: the feed's read (`readChanges`,
 * src/db/dispatchReads.ts) and the tick's own reply when its caller says
 * which tick it has seen (`since`, src/db/sql/rtTickGrant.ts) return the
 * same thing, so they are built here once. The arguments are SQL
 * expressions (a plpgsql variable, or a validated integer literal);
 * `asArray` says how rows are sent (src/db/sql/rowJson.ts).
 */
import { outputTailSql } from '../storedTail.js';
import { lineJson, sessionJson, taskChangeJson } from './rowJson.js';
/**
 * The latest tick that changed a session's status, for the board's change
 * feed (`readChanges`): transitions come in the order queued, claimed,
 * ended, so the latest set column is the latest change.
 */
export const CHANGED_TICK = 'coalesce(ended_tick, claimed_tick, queued_tick)';

/**
 * A `json` array: the latest attempt of every task a tick in (`since`,
 * `until`] touched (`until` null: no upper bound), with its task, in
 * enqueue order; with `skip` (a SQL array of tick numbers), not the
 * sessions whose latest change is in one of those ticks. With
 * `tailChars`, a finished attempt also carries `output`: the last
 * `tailChars` characters of its stored output and whether that is all of
 * it (`{t, w}`), or null when it stored none. Unless `withSpec` (an SQL
 * boolean expression) holds, an array row's task has no `run_spec` (null):
 * nobody who reads changes runs them (src/db/sql/rowJson.ts `taskChangeJson`).
 *
 * `json`, not `jsonb`: this is built to be sent, never queried, and
 * building `jsonb` (binary, keys sorted, then printed again) cost three to
 * four times as much: 60 changed sessions read in 11-15 ms against 3-3.5
 * ms, measured with three nodes ticking (every node reads the other two's
 * changes, inside the tick's lock when they ride its reply).
 */
export function changedSessions(
  since: string,
  until: string | null,
  tailChars: string | null,
  asArray: string,
  skip: string | null = null,
  withSpec = 'true',
) {
  // `skip`: ticks whose changes the caller has (its own, from their replies):
  // a session whose latest change is in one of them is not sent again.
  const upTo =
    (until === null ? '' : ` AND ${CHANGED_TICK} <= ${until}`) +
    (skip === null ? '' : ` AND NOT (${CHANGED_TICK} = ANY (${skip}))`);
  const tail = outputTailSql('o', tailChars ?? 'NULL');
  // The limit beside the task's row, not in it: older nodes check a row's
  // array by its length (src/db/tickReply.ts rowOf).
  const pair = `'session', ${sessionJson('ls', asArray)}, 'task', ${taskChangeJson('t', asArray, withSpec)}, 'limit', t.time_limit_ms`;
  const item =
    tailChars === null
      ? `json_build_object(${pair})`
      : // A tick that sent no tail size (its variable null) gets none: no output key.
        `CASE WHEN ${tailChars} IS NOT NULL AND ls.status NOT IN ('queued', 'running') THEN json_build_object(${pair}, 'output', (
          SELECT json_build_object('t', ${tail.tail}, 'w', ${tail.whole})
          FROM session_outputs o WHERE o.session_id = ls.id)) ELSE json_build_object(${pair}) END`;
  return `(SELECT coalesce(json_agg(${item} ORDER BY ls.enqueued_at, ls.id), '[]')
    FROM (SELECT s.task_id FROM sessions s WHERE ${CHANGED_TICK} > ${since}${upTo}
          UNION
          -- Ticks before migration 7 wrote history rows instead.
          SELECT s.task_id FROM session_events e JOIN sessions s ON s.id = e.session_id
          WHERE e.tick > ${since}${until === null ? '' : ` AND e.tick <= ${until}`}) ch
    CROSS JOIN LATERAL (SELECT * FROM sessions x WHERE x.task_id = ch.task_id
                        ORDER BY x.attempt DESC LIMIT 1) ls
    JOIN tasks t ON t.id = ch.task_id)`;
}

/** A `json` array of every line a tick after `since` changed, emptied ones included. */
export const changedLines = (since: string, asArray: string) =>
  `(SELECT coalesce(json_agg(${lineJson('l', asArray)} ORDER BY l.user_id), '[]')
    FROM user_lines l WHERE l.tick > ${since})`;
