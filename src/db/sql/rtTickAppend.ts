/**
 * The phases of `rt_tick` that add queued sessions at the back of their
 * users' lines: board retries (a compare-and-set on the latest attempt) and
 * enqueues (idempotent on the caller's ids, and on its submission keys:
 * docs/data.md, "Submission keys"). Spliced into the function body
 * by rtTick.ts; the variables are its.
 */
import { KEY_IN_USE } from '../keyTakenBy.js';
import { A, byKey, NF, REPLAYED, STALE } from './outcomeSql.js';

/** An enqueue op's fields as `jsonb_to_recordset` reads them (`key` null when not given). */
const ENQUEUE_COLUMNS = `ord integer, ref text, task_id text, session_id text,
        user_id text, title text, spec jsonb, col text, key text, limit_ms integer`;

/**
 * An enqueue op `x` with what its ids find: its session (`ex_*`), and
 * whether its task id is taken; `more` adds columns.
 */
const byIdsLookup = (
  more = '',
) => `x.*, ex.task_id AS ex_task, ex.status AS ex_status, ex.epoch AS ex_epoch,
        (SELECT k.id FROM tasks k WHERE k.id = x.task_id LIMIT 1) IS NOT NULL AS task_taken${more}
      FROM jsonb_to_recordset(p->'enqueues') AS x(${ENQUEUE_COLUMNS})
      LEFT JOIN LATERAL ${byKey('sessions', 'x.session_id')} ex ON true`;

/** The queued rows (for rt_place) and the outcomes' first branches, of the enqueues `q` marks `fresh`. */
const CREATED_AND_BY_IDS = `SELECT coalesce(jsonb_agg(jsonb_build_object('ord', q.ord, 'id', q.session_id, 'task_id', q.task_id,
        'user_id', q.user_id, 'kind', 'run', 'attempt', 1, 'reason', 'created') ORDER BY q.ord)
        FILTER (WHERE q.fresh), '[]'),
      jsonb_agg(CASE WHEN q.fresh OR q.ex_task = q.task_id THEN ${A('q.session_id', 'true').replaceAll('x.', 'q.')}
        WHEN q.ex_task IS NOT NULL THEN ${STALE('q.ex_status', 'q.ex_epoch').replaceAll('x.', 'q.')}
        WHEN q.task_taken THEN ${STALE("'task id taken'", '0').replaceAll('x.', 'q.')}`;

/** Enqueues none of which has a key: by their ids alone. */
const PLAIN_ENQUEUES = `    WITH q AS (
      SELECT y.*, y.ex_task IS NULL AND NOT y.task_taken AS fresh FROM (SELECT ${byIdsLookup()}) y
    ), ti AS (
      INSERT INTO tasks (id, user_id, title, run_spec, board_column, created_at, updated_at, time_limit_ms)
      SELECT q.task_id, q.user_id, q.title, q.spec, q.col, v_now, v_now, q.limit_ms FROM q WHERE q.fresh
    )
    ${CREATED_AND_BY_IDS} END)
    INTO v_rows, v_o FROM q;`;

/**
 * Enqueues some of which have a key: each keyed one also looks up the
 * user's task with that key (the unique index by user and key), and of the
 * enqueues one tick has with one key, the first queues and the others
 * answer its task. `q0` is materialized: inlined into `q1` and `q`, its
 * task-id probe ran three times a row.
 */
const KEYED_ENQUEUES = `    WITH q0 AS MATERIALIZED (
      SELECT ${byIdsLookup(',\n        kt.id AS key_task, kt.same AS key_same, kt.sid AS key_sid')}
      LEFT JOIN LATERAL (SELECT k.id, (k.title = x.title AND k.run_spec = x.spec) AS same,
          (SELECT s.id FROM sessions s WHERE s.task_id = k.id ORDER BY s.attempt DESC LIMIT 1) AS sid
        FROM tasks k WHERE x.key IS NOT NULL AND k.user_id = x.user_id AND k.submit_key = x.key LIMIT 1) kt ON true
    ), q1 AS (
      SELECT q0.*, q0.ex_task IS NULL AND NOT q0.task_taken AND q0.key_task IS NULL AS open FROM q0
    ), q AS (
      SELECT q1.*, q1.open AND (q1.key IS NULL OR q1.ord = first_value(q1.ord) OVER w) AS fresh,
        first_value(q1.session_id) OVER w AS lead_sid, first_value(q1.task_id) OVER w AS lead_task,
        (first_value(q1.title) OVER w = q1.title AND first_value(q1.spec) OVER w = q1.spec) AS lead_same
      FROM q1 WINDOW w AS (PARTITION BY q1.open, q1.user_id, q1.key ORDER BY q1.ord)
    ), ti AS (
      INSERT INTO tasks (id, user_id, title, run_spec, board_column, created_at, updated_at, submit_key, time_limit_ms)
      SELECT q.task_id, q.user_id, q.title, q.spec, q.col, v_now, v_now, q.key, q.limit_ms FROM q WHERE q.fresh
    )
    ${CREATED_AND_BY_IDS}
        WHEN q.key_task IS NOT NULL AND q.key_same AND q.key_sid IS NOT NULL THEN ${REPLAYED('q.key_sid')}
        WHEN q.key_task IS NOT NULL THEN ${STALE(`'${KEY_IN_USE}' || q.key_task`, '0').replaceAll('x.', 'q.')}
        WHEN q.lead_same THEN ${REPLAYED('q.lead_sid')}
        ELSE ${STALE(`'${KEY_IN_USE}' || q.lead_task`, '0').replaceAll('x.', 'q.')} END)
    INTO v_rows, v_o FROM q;`;

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

  -- Enqueues: task, session, history; idempotent on the ids, and on the
  -- caller's key (per user) when it gives one: a key a task already has
  -- (kept, or earlier in this tick) queues nothing and answers that task.
  -- A tick with no key takes the statement without the key's lookups and
  -- window: a burst of 500 enqueues paid ~10% more for them.
  IF jsonb_array_length(p->'enqueues') > 0 THEN
    IF jsonb_path_exists(p->'enqueues', '$[*].key') THEN
${KEYED_ENQUEUES}
    ELSE
${PLAIN_ENQUEUES}
    END IF;
    v_out := v_out || v_o;
    IF jsonb_array_length(v_rows) > 0 THEN
      v_next_join := rt_place(v_rows, false, v_tick, v_now, v_ucap, v_next_join);
      v_changed := true;
    END IF;
  END IF;

`;
