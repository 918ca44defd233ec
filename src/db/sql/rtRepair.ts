/**
 * `rt_repair() RETURNS jsonb`: the Reconciler's drift repair for the
 * dispatch state. Under the tick's lock it makes every user's queued turns
 * contiguous under one join number (sessions written outside ticks, by the
 * pre-tick repositories, have none), then recomputes every line's counts and
 * cap and the global running count from the rows. Touches only what
 * differs; a repair that found nothing changes nothing (no tick, no NOTIFY).
 */
import { ADVISORY_LOCKS, LOCK_NAMESPACE } from '../advisoryLocks.js';
import { TICK_CHANNEL } from './tickChannel.js';

export const RT_REPAIR = `CREATE FUNCTION rt_repair() RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  st dispatch_state%ROWTYPE;
  v_tick bigint;
  v_renumbered jsonb;
  v_lines jsonb;
  v_running integer;
  v_joined bigint;
BEGIN
  PERFORM pg_advisory_xact_lock(${LOCK_NAMESPACE}, ${ADVISORY_LOCKS.claimSlot});
  SELECT * INTO st FROM dispatch_state WHERE id;
  IF NOT FOUND THEN st := rt_state_row(); END IF;
  v_tick := st.tick + 1;

  -- 1. Lines that are not head .. head + n - 1 under one join number: renumber
  -- in their present order (turn, then arrival), keeping their first turn
  -- and join number when they have them, else joining at the floor.
  WITH q AS (
    SELECT s.user_id, count(*) AS n, count(s.turn) AS nt, count(s.join_seq) AS nj,
      min(s.turn) AS t0, max(s.turn) AS t1, count(DISTINCT s.join_seq) AS dj, min(s.join_seq) AS j,
      min(s.enqueued_at) AS first_at
    FROM sessions s WHERE s.status = 'queued' GROUP BY s.user_id
  ), bad AS (
    SELECT q.*, CASE WHEN q.j IS NULL
      THEN row_number() OVER (PARTITION BY q.j IS NULL ORDER BY q.first_at, q.user_id) END AS fresh
    FROM q WHERE q.nt <> q.n OR q.nj <> q.n OR q.dj <> 1 OR q.t1 - q.t0 + 1 <> q.n
  ), fl AS (
    SELECT coalesce(min(l.head_turn), 0) AS floor FROM user_lines l
    WHERE l.queued > 0 AND l.user_id NOT IN (SELECT bad.user_id FROM bad)
  ), o AS (
    SELECT s.id, coalesce(bad.t0, fl.floor)
        + row_number() OVER (PARTITION BY s.user_id ORDER BY s.turn NULLS LAST, s.enqueued_at, s.id) - 1 AS turn,
      coalesce(bad.j, st.next_join_seq + bad.fresh - 1) AS js
    FROM sessions s JOIN bad ON bad.user_id = s.user_id CROSS JOIN fl
    WHERE s.status = 'queued'
  ), u AS (
    UPDATE sessions s SET turn = o.turn, join_seq = o.js FROM o WHERE s.id = o.id
  )
  SELECT coalesce((SELECT jsonb_agg(b.user_id ORDER BY b.user_id) FROM bad b), '[]'),
    (SELECT count(*) FROM bad b WHERE b.j IS NULL)
  INTO v_renumbered, v_joined;

  -- 2. Every line's counts, head, join number and cap from the rows.
  WITH c AS (
    SELECT u.user_id, coalesce(q.n, 0) AS queued, coalesce(r.n, 0) AS running, q.t0, q.j, cap.max_running AS cap
    FROM (SELECT user_id FROM user_lines UNION SELECT user_id FROM sessions WHERE status IN ('queued', 'running')
          UNION SELECT user_id FROM user_caps) u
    LEFT JOIN (SELECT user_id, count(*) AS n, min(turn) AS t0, min(join_seq) AS j FROM sessions
               WHERE status = 'queued' GROUP BY user_id) q ON q.user_id = u.user_id
    LEFT JOIN (SELECT user_id, count(*) AS n FROM sessions WHERE status = 'running' GROUP BY user_id) r
      ON r.user_id = u.user_id
    LEFT JOIN user_caps cap ON cap.user_id = u.user_id
  ), fixed AS (
    INSERT INTO user_lines AS l (user_id, head_turn, queued, running, join_seq, max_running, has_override, tick)
    SELECT c.user_id, coalesce(c.t0, 0), c.queued, c.running, coalesce(c.j, 0),
      coalesce(c.cap, st.default_user_cap), c.cap IS NOT NULL, v_tick FROM c
    ON CONFLICT (user_id) DO UPDATE SET
      head_turn = CASE WHEN EXCLUDED.queued > 0 THEN EXCLUDED.head_turn ELSE l.head_turn END,
      join_seq = CASE WHEN EXCLUDED.queued > 0 THEN EXCLUDED.join_seq ELSE l.join_seq END,
      queued = EXCLUDED.queued, running = EXCLUDED.running, max_running = EXCLUDED.max_running,
      has_override = EXCLUDED.has_override, tick = EXCLUDED.tick
    WHERE (l.queued, l.running, l.max_running, l.has_override)
        IS DISTINCT FROM (EXCLUDED.queued, EXCLUDED.running, EXCLUDED.max_running, EXCLUDED.has_override)
      OR (EXCLUDED.queued > 0 AND (l.head_turn, l.join_seq) IS DISTINCT FROM (EXCLUDED.head_turn, EXCLUDED.join_seq))
    RETURNING l.user_id
  )
  SELECT coalesce(jsonb_agg(fixed.user_id ORDER BY fixed.user_id), '[]') INTO v_lines FROM fixed;

  -- 3. The global count.
  SELECT count(*) INTO v_running FROM sessions WHERE status = 'running';

  IF jsonb_array_length(v_renumbered) = 0 AND jsonb_array_length(v_lines) = 0 AND v_running = st.running THEN
    RETURN jsonb_build_object('tick', st.tick, 'renumbered', v_renumbered, 'lines', v_lines, 'running', NULL);
  END IF;
  UPDATE dispatch_state SET tick = v_tick, running = v_running, next_join_seq = st.next_join_seq + v_joined
    WHERE id;
  PERFORM pg_notify('${TICK_CHANNEL}', v_tick::text);
  RETURN jsonb_build_object('tick', v_tick, 'renumbered', v_renumbered, 'lines', v_lines,
    'running', CASE WHEN v_running <> st.running THEN jsonb_build_object('from', st.running, 'to', v_running) END);
END $$`;
