/**
 * The phases of `rt_tick` that add queued sessions at the back of their
 * users' lines: board retries (a compare-and-set on the latest attempt) and
 * enqueues (idempotent on the caller's ids). Spliced into the function body
 * by rtTick.ts; the variables are its.
 */
import { A, byKey, NF, STALE } from './outcomeSql.js';

export const APPEND_PHASES = `  -- Retries: compare-and-set on the latest attempt; a new attempt at the back of the line.
  IF jsonb_array_length(p->'retries') > 0 THEN
    WITH r AS (
      SELECT x.* FROM jsonb_to_recordset(p->'retries') AS x(ord integer, ref text, task_id text,
        actor text, session_id text, exp_session_id text, exp_status text, exp_epoch integer, col text)
    ), z AS (
      SELECT r.*, t.id AS found, lt.id AS l_id, lt.status AS l_status, lt.epoch AS l_epoch,
        lt.attempt AS l_attempt, lt.kind AS l_kind, lt.user_id AS l_user, mine.task_id AS mine_task,
        (t.id IS NOT NULL AND lt.id IS NOT NULL AND mine.task_id IS NULL AND lt.id = r.exp_session_id
          AND lt.status = r.exp_status AND lt.epoch = r.exp_epoch) AS cand
      FROM r
      LEFT JOIN LATERAL (SELECT k.id FROM tasks k
        WHERE k.id = r.task_id AND (r.actor IS NULL OR k.user_id = r.actor) LIMIT 1) t ON true
      LEFT JOIN LATERAL (SELECT s.id, s.status, s.epoch, s.attempt, s.kind, s.user_id FROM sessions s
        WHERE s.task_id = t.id ORDER BY s.attempt DESC LIMIT 1) lt ON true
      LEFT JOIN LATERAL ${byKey('sessions', 'r.session_id')} mine ON true
    ), y AS (
      -- Of several retries of one task in a tick, the first wins; the others are superseded by it.
      SELECT z.*, (z.cand AND row_number() OVER w = 1) AS ok, first_value(z.session_id) OVER w AS first_id
      FROM z WINDOW w AS (PARTITION BY z.task_id, z.cand ORDER BY z.ord)
    )
    SELECT coalesce(jsonb_agg(jsonb_build_object('ord', y.ord, 'id', y.session_id, 'task_id', y.task_id,
        'user_id', y.l_user, 'kind', y.l_kind, 'attempt', y.l_attempt + 1, 'reason', 'retry of ' || y.l_id,
        'col', y.col) ORDER BY y.ord) FILTER (WHERE y.ok), '[]'),
      jsonb_agg(CASE WHEN y.found IS NULL OR y.l_id IS NULL THEN ${NF.replaceAll('x.', 'y.')}
        WHEN y.ok OR y.mine_task = y.task_id THEN ${A('y.session_id', 'true').replaceAll('x.', 'y.')}
        WHEN y.cand THEN ${STALE("'superseded by ' || y.first_id", '0').replaceAll('x.', 'y.')}
        WHEN y.mine_task IS NOT NULL THEN ${STALE("'session id taken'", '0').replaceAll('x.', 'y.')}
        WHEN y.l_id = y.exp_session_id THEN ${STALE('y.l_status', 'y.l_epoch').replaceAll('x.', 'y.')}
        ELSE ${STALE("'superseded by ' || y.l_id", 'y.l_epoch').replaceAll('x.', 'y.')} END)
    INTO v_rows, v_o FROM y;
    v_out := v_out || v_o;
    IF jsonb_array_length(v_rows) > 0 THEN
      UPDATE tasks t SET board_column = x.col, updated_at = v_now
      FROM jsonb_to_recordset(v_rows) AS x(task_id text, col text) WHERE t.id = x.task_id;
      v_next_join := rt_place(v_rows, false, v_tick, v_now, v_ucap, v_next_join);
      v_changed := true;
    END IF;
  END IF;

  -- Enqueues: task, session, history; idempotent on the ids.
  IF jsonb_array_length(p->'enqueues') > 0 THEN
    WITH q AS (
      SELECT x.*, ex.task_id AS ex_task, ex.status AS ex_status, ex.epoch AS ex_epoch,
        (SELECT k.id FROM tasks k WHERE k.id = x.task_id LIMIT 1) IS NOT NULL AS task_taken
      FROM jsonb_to_recordset(p->'enqueues') AS x(ord integer, ref text, task_id text, session_id text,
        user_id text, title text, spec jsonb, col text)
      LEFT JOIN LATERAL ${byKey('sessions', 'x.session_id')} ex ON true
    ), ti AS (
      INSERT INTO tasks (id, user_id, title, run_spec, board_column, created_at, updated_at)
      SELECT q.task_id, q.user_id, q.title, q.spec, q.col, v_now, v_now FROM q
      WHERE q.ex_task IS NULL AND NOT q.task_taken
    )
    SELECT coalesce(jsonb_agg(jsonb_build_object('ord', q.ord, 'id', q.session_id, 'task_id', q.task_id,
        'user_id', q.user_id, 'kind', 'run', 'attempt', 1, 'reason', 'created') ORDER BY q.ord)
        FILTER (WHERE q.ex_task IS NULL AND NOT q.task_taken), '[]'),
      jsonb_agg(CASE WHEN (q.ex_task IS NULL AND NOT q.task_taken) OR q.ex_task = q.task_id
          THEN ${A('q.session_id', 'true').replaceAll('x.', 'q.')}
        WHEN q.ex_task IS NOT NULL THEN ${STALE('q.ex_status', 'q.ex_epoch').replaceAll('x.', 'q.')}
        ELSE ${STALE("'task id taken'", '0').replaceAll('x.', 'q.')} END)
    INTO v_rows, v_o FROM q;
    v_out := v_out || v_o;
    IF jsonb_array_length(v_rows) > 0 THEN
      v_next_join := rt_place(v_rows, false, v_tick, v_now, v_ucap, v_next_join);
      v_changed := true;
    END IF;
  END IF;

`;
