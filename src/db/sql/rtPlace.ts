/**
 * Helpers of `rt_tick`, in SQL: the exact position formula (fragments), the
 * placement of new queued sessions in their users' lines (docs/runner-pool.md,
 * "The order: turns"), and the state row's rebuild.
 */
import { INITIAL_CAPS } from './dispatchSchema.js';
import { byKey } from './outcomeSql.js';

/**
 * Exact positions, as SQL fragments. A session's position is 1 + the queued
 * sessions whose key (turn, join_seq) is smaller. A user u's queued
 * sessions hold the contiguous turns head_u .. head_u + queued_u - 1 (every
 * tick keeps them so), so u contributes clamp(t - head_u + (join_u < j ? 1
 * : 0), 0, queued_u): O(active users) per session, never O(queue depth).
 * Use: `WITH ${ACTIVE_LINES} SELECT ... FROM q LEFT JOIN LATERAL
 * ${positionAmong('q')} p ON true`. The active lines are read
 * once (materialized), not once per session.
 */
export const ACTIVE_LINES =
  'act AS MATERIALIZED (SELECT head_turn, join_seq, queued FROM user_lines WHERE queued > 0)';

export const positionOf = (q: string) =>
  `1 + coalesce(sum(greatest(0, least(act.queued::bigint, ${q}.turn - act.head_turn
    + CASE WHEN act.join_seq < ${q}.join_seq THEN 1 ELSE 0 END))), 0)`;

/**
 * The position of the session row `q`, as a lateral subquery (one row,
 * column `pos`) over the active lines. Per row, not as a set joined back to
 * the rows by id: the tick's statements run with hash and merge joins off
 * (generic plans, see `byKey`), so such a join was a nested loop comparing
 * every op with every position, quadratic in the ops of a tick (500
 * enqueues: 2 x 250,000 comparisons, ~40 of a 62 ms tick). Only a placed
 * row reads the lines: the condition is on the outer row alone, so it is a
 * one-time filter of each rescan, and a finished or running row (most of a
 * steady tick's outcomes) costs no scan; a row that is not placed gets a
 * null position. (As the join's ON condition it only hid the
 * result: every outcome scanned the lines, ~40% of the reply statement.)
 */
export const positionAmong = (q: string) =>
  `(SELECT CASE WHEN ${placed(q)} THEN ${positionOf(q)} END AS pos
    FROM act WHERE ${placed(q)} AND act.head_turn <= ${q}.turn)`;

/** Whether the session row `q` has a position: queued, with its turn key. */
export const placed = (q: string) =>
  `(${q}.status = 'queued' AND ${q}.turn IS NOT NULL AND ${q}.join_seq IS NOT NULL)`;

/**
 * `rt_place(rows, at_head, tick, now, default_cap, next_join)`: inserts new
 * queued sessions (rows: ord, id, task_id, user_id, kind, attempt, reason),
 * their history rows, and their users' line counts, set-based. Returns the
 * next free join number. The rows carry their own history (migration 7:
 * `queued_tick`, `queued_reason`; docs/data.md, "History").
 *
 * - A user with queued work: at the back (`at_head` false: turns from
 *   head + queued on) or at the head (`at_head` true, a run the
 *   infrastructure interrupted: head - k .. head - 1 in op order).
 * - A user whose line is empty joins at the floor (the smallest head of a
 *   non-empty line, 0 if none) with a fresh join number, in op order of
 *   their first row. Joining never lowers the floor, so one floor serves
 *   the whole batch.
 *
 * Must run under the dispatch lock (it reads then writes the lines).
 */
export const RT_PLACE = `CREATE FUNCTION rt_place(p_rows jsonb, p_head boolean, p_tick bigint,
  p_now timestamptz, p_ucap integer, p_next_join bigint) RETURNS bigint
LANGUAGE plpgsql VOLATILE SET plan_cache_mode = force_generic_plan
  SET enable_hashjoin = off SET enable_mergejoin = off SET enable_seqscan = off AS $$
DECLARE v_joined bigint;
BEGIN
  -- Each row carries its user's facts (window functions, then one probe of
  -- its line per row), never a join back to a per-user set: the joins here
  -- are nested loops (hash joins are off), and one to a set of users read
  -- all of it for every row (500 rows of 500 users: 21 of a 36 ms call).
  WITH r AS (
    SELECT x.*, count(*) OVER u AS k, min(x.ord) OVER u AS first_ord,
      row_number() OVER (PARTITION BY x.user_id ORDER BY x.ord) AS rn
    FROM jsonb_to_recordset(p_rows) AS x(ord integer, id text, task_id text, user_id text,
      kind text, attempt integer, reason text)
    WINDOW u AS (PARTITION BY x.user_id)
  ), fl AS (
    SELECT coalesce(min(head_turn), 0) AS floor FROM user_lines WHERE queued > 0
  ), rl AS (
    SELECT r.*, coalesce(l.queued, 0) > 0 AS has, l.head_turn, l.queued, l.join_seq
    FROM r LEFT JOIN LATERAL ${byKey('user_lines', 'r.user_id', 'user_id')} l ON true
  ), b AS (
    SELECT rl.*,
      CASE WHEN NOT rl.has THEN fl.floor WHEN p_head THEN rl.head_turn - rl.k
           ELSE rl.head_turn + rl.queued END AS base,
      CASE WHEN NOT rl.has THEN fl.floor WHEN p_head THEN rl.head_turn - rl.k
           ELSE rl.head_turn END AS head,
      -- A user new to the order: the next join number, in op order of its first row.
      CASE WHEN rl.has THEN rl.join_seq
           ELSE p_next_join + dense_rank() OVER (PARTITION BY rl.has ORDER BY rl.first_ord) - 1 END AS js
    FROM rl CROSS JOIN fl
  ), ins AS (
    -- The history is the row (queued_tick, queued_reason; migration 7), no event row.
    INSERT INTO sessions (id, task_id, user_id, kind, status, attempt, enqueued_at, updated_at, turn, join_seq,
      queued_tick, queued_reason)
    SELECT b.id, b.task_id, b.user_id, b.kind, 'queued', b.attempt, p_now, p_now,
      b.base + b.rn - 1, b.js, p_tick, nullif(b.reason, 'created')
    FROM b
  ), ln AS (
    INSERT INTO user_lines (user_id, head_turn, queued, running, join_seq, max_running, has_override, tick)
    SELECT b.user_id, b.head, b.k, 0, b.js, coalesce(c.max_running, p_ucap), c.user_id IS NOT NULL, p_tick
    FROM b LEFT JOIN LATERAL ${byKey('user_caps', 'b.user_id', 'user_id')} c ON true
    WHERE b.rn = 1
    ON CONFLICT (user_id) DO UPDATE SET head_turn = EXCLUDED.head_turn,
      queued = user_lines.queued + EXCLUDED.queued, join_seq = EXCLUDED.join_seq, tick = EXCLUDED.tick
  )
  SELECT count(*) INTO v_joined FROM b WHERE NOT b.has AND b.rn = 1;
  RETURN p_next_join + v_joined;
END $$`;

/**
 * `rt_state_row()`: the dispatch_state row, created from the rows if it is
 * missing (a TRUNCATE of every table, as the test harness does between
 * tests, or a hand repair). Counts and caps as migration 4's backfill makes
 * them; the tick that asked writes its caps over them. Under the lock.
 */
export const RT_STATE_ROW = `CREATE FUNCTION rt_state_row() RETURNS dispatch_state
LANGUAGE sql VOLATILE AS $$
  INSERT INTO dispatch_state (running, global_cap, default_user_cap, tick, next_join_seq)
  SELECT (SELECT count(*) FROM sessions WHERE status = 'running'), ${INITIAL_CAPS.globalCap},
    ${INITIAL_CAPS.defaultUserCap}, coalesce((SELECT max(tick) FROM user_lines), 0),
    coalesce((SELECT max(join_seq) + 1 FROM user_lines), 0)
  ON CONFLICT (id) DO UPDATE SET id = EXCLUDED.id
  RETURNING *
$$`;
