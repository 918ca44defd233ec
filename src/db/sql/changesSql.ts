/**
 * What ticks changed, as SQL fragments: the feed's read (`readChanges`,
 * src/db/dispatchReads.ts) and the tick's own reply when its caller says
 * which tick it has seen (`since`, src/db/sql/rtTickGrant.ts) return the
 * same thing, so they are built here once. The arguments are SQL
 * expressions (a plpgsql variable, or a validated integer literal).
 */
/**
 * The latest tick that changed a session's status, for the board's change
 * feed (`readChanges`): transitions come in the order queued, claimed,
 * ended, so the latest set column is the latest change.
 */
export const CHANGED_TICK = 'coalesce(ended_tick, claimed_tick, queued_tick)';

/**
 * A `jsonb` array: the latest attempt of every task a tick in (`since`,
 * `until`] touched (`until` null: no upper bound), with its task, in
 * enqueue order. With `tailChars`, a finished attempt also carries
 * `output`: the last `tailChars` characters of its stored output and
 * whether that is all of it (`{t, w}`), or null when it stored none.
 */
export function changedSessions(since: string, until: string | null, tailChars: string | null) {
  const upTo = until === null ? '' : ` AND ${CHANGED_TICK} <= ${until}`;
  const tail =
    tailChars === null
      ? ''
      : ` || CASE WHEN ls.status NOT IN ('queued', 'running') THEN jsonb_build_object('output', (
          SELECT jsonb_build_object('t', right(o.text, ${tailChars}), 'w', length(o.text) <= ${tailChars})
          FROM session_outputs o WHERE o.session_id = ls.id)) ELSE '{}'::jsonb END`;
  return `(SELECT coalesce(jsonb_agg(jsonb_build_object('session', to_jsonb(ls), 'task', to_jsonb(t))${tail}
      ORDER BY ls.enqueued_at, ls.id), '[]')
    FROM (SELECT s.task_id FROM sessions s WHERE ${CHANGED_TICK} > ${since}${upTo}
          UNION
          -- Ticks before migration 7 wrote history rows instead.
          SELECT s.task_id FROM session_events e JOIN sessions s ON s.id = e.session_id
          WHERE e.tick > ${since}${until === null ? '' : ` AND e.tick <= ${until}`}) ch
    CROSS JOIN LATERAL (SELECT * FROM sessions x WHERE x.task_id = ch.task_id
                        ORDER BY x.attempt DESC LIMIT 1) ls
    JOIN tasks t ON t.id = ch.task_id)`;
}

/** A `jsonb` array of every line a tick after `since` changed, emptied ones included. */
export const changedLines = (since: string) =>
  `(SELECT coalesce(jsonb_agg(to_jsonb(l) ORDER BY l.user_id), '[]')
    FROM user_lines l WHERE l.tick > ${since})`;
