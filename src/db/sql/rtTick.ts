/**
 * `rt_tick(p jsonb) RETURNS jsonb`: one dispatch tick in one statement (the
 * contract is src/db/tickTypes.ts; the JSON shape `p` is built by
 * src/db/tickInput.ts). Every phase is one set-based statement over
 * `jsonb_to_recordset`, in the contract's order: caps, handles, finishes
 * (with head-of-line requeues), cancels (with the renumber), retries,
 * enqueues, then the grants. A tick writes no history rows: each status
 * change sets its tick on the session row (queued_tick, claimed_tick,
 * ended_tick) and the tick writes one `dispatch_ticks` row; the history is
 * derived from them (migration 7, src/db/sql/derivedHistory.ts). No EXCEPTION blocks: a subtransaction per op
 * would cost more than the op. An op that loses its compare-and-set is an
 * outcome, not an error; only a broken invariant raises (and rolls the
 * whole tick back).
 *
 * VOLATILE: each statement takes a fresh snapshot, so everything after the
 * lock sees every tick committed before it. Generic plans: the function's
 * statements are planned once per connection instead of on every call
 * (measured 234 vs 92 µs per job in the prototype, ../shared/DISPATCH.md).
 */
import { ADVISORY_LOCKS, LOCK_NAMESPACE } from '../advisoryLocks.js';
import { OUTPUT_TAIL_CHARS } from '../storedTail.js';
import { A, byKey, NF, opOf, opsBySession, SESSIONS_OF_OPS, STALE } from './outcomeSql.js';
import { sessionJson, taskJson } from './rowJson.js';
import { APPEND_PHASES } from './rtTickAppend.js';
import { GRANT_AND_REPLY } from './rtTickGrant.js';

/** An outcome fragment for the handle folded into the finish row `x`: its own ord and ref. */
const folded = (outcome: string) =>
  outcome.replaceAll('x.ord', 'x.h_ord').replaceAll('x.ref', 'x.h_ref');

export const RT_TICK = `CREATE FUNCTION rt_tick(p jsonb) RETURNS json
LANGUAGE plpgsql VOLATILE SET plan_cache_mode = force_generic_plan
  SET enable_hashjoin = off SET enable_mergejoin = off SET enable_seqscan = off SET jit = off AS $$
DECLARE
  v_owner text := p->>'owner';
  v_now timestamptz := (p->>'now')::timestamptz;
  v_want integer := (p->>'want')::integer;
  v_gcap integer := (p->>'global_cap')::integer;
  v_ucap integer := (p->>'default_user_cap')::integer;
  st dispatch_state%ROWTYPE;
  v_tick bigint;
  v_running integer;
  v_next_join bigint;
  v_changed boolean := false;
  v_out jsonb := '[]';
  v_rows jsonb;
  v_ops jsonb;
  v_cq jsonb;
  v_o jsonb;
  v_n integer;
  v_r integer;
  v_free integer;
  v_granted json := '[]';
  v_reply json;
  v_gids text[] := '{}';
  v_over boolean;
  v_others boolean;
  v_watched boolean;
  v_grantable boolean;
  v_since bigint := (p->>'since')::bigint;
  v_tail integer := (p->>'tail_chars')::integer;
  v_cmax integer := (p->>'changes_max')::integer;
  -- Change rows without their tasks' run specs (migration 20); an older node asks for none.
  v_nospec boolean := coalesce((p->>'changes_without_spec')::boolean, false);
  v_deferred boolean;
  -- Rows as arrays (src/db/sql/rowJson.ts); an older node asks for none and gets objects.
  v_arr boolean := coalesce(p->>'rows' = 'array', false);
  -- The reply's optional parts (see the end of the function).
  v_owned json;
  v_changes json;
  v_lines json := '[]';
  -- A finish answered as its phase ends (no requeue to place, no retry in
  -- this tick that could rewrite its card): see the finishes' outcomes.
  v_early boolean := coalesce((p->>'finished')::boolean, false) AND jsonb_array_length(p->'retries') = 0;
  v_finished json;
  v_fo jsonb;
BEGIN
  PERFORM pg_advisory_xact_lock(${LOCK_NAMESPACE}, ${ADVISORY_LOCKS.claimSlot});
  -- By key: one row, but each tick leaves a dead version behind it.
  SELECT * INTO st FROM dispatch_state WHERE id;
  IF NOT FOUND THEN
    st := rt_state_row();
    -- Never reuse a tick number the log holds (the state row was rebuilt by hand).
    st.tick := greatest(st.tick, coalesce((SELECT max(k.tick) FROM dispatch_ticks k), 0));
    UPDATE dispatch_state SET tick = st.tick WHERE id;
  END IF;
  v_tick := st.tick + 1;
  v_running := st.running;
  v_next_join := st.next_join_seq;

  -- Caps. A new default reaches every line without an override.
  IF st.default_user_cap <> v_ucap THEN
    UPDATE user_lines SET max_running = v_ucap, tick = v_tick
    WHERE NOT has_override AND max_running <> v_ucap;
  END IF;
  IF st.default_user_cap <> v_ucap OR st.global_cap <> v_gcap THEN v_changed := true; END IF;
  IF jsonb_array_length(p->'caps') > 0 THEN
    WITH c AS (
      SELECT DISTINCT ON (x.user_id) x.* FROM jsonb_to_recordset(p->'caps')
        AS x(ord integer, ref text, user_id text, max_running integer)
      ORDER BY x.user_id, x.ord DESC
    ), d AS (
      DELETE FROM user_caps uc USING c WHERE c.max_running IS NULL AND uc.user_id = c.user_id
    ), i AS (
      INSERT INTO user_caps (user_id, max_running, updated_at)
      SELECT c.user_id, c.max_running, v_now FROM c WHERE c.max_running IS NOT NULL
      ON CONFLICT (user_id) DO UPDATE SET max_running = EXCLUDED.max_running, updated_at = EXCLUDED.updated_at
      WHERE user_caps.max_running <> EXCLUDED.max_running
    )
    -- A cap already in place changes nothing (a retried tick writes nothing).
    INSERT INTO user_lines AS ln (user_id, head_turn, queued, running, join_seq, max_running, has_override, tick)
    SELECT c.user_id, 0, 0, 0, 0, coalesce(c.max_running, v_ucap), c.max_running IS NOT NULL, v_tick FROM c
    ON CONFLICT (user_id) DO UPDATE SET max_running = EXCLUDED.max_running,
      has_override = EXCLUDED.has_override, tick = EXCLUDED.tick
    WHERE (ln.max_running, ln.has_override) IS DISTINCT FROM (EXCLUDED.max_running, EXCLUDED.has_override);
    GET DIAGNOSTICS v_n = ROW_COUNT;
    IF v_n > 0 THEN v_changed := true; END IF;
    v_out := v_out || (SELECT jsonb_agg(jsonb_build_object('o', x.ord, 'r', x.ref, 'k', 'c', 'u', x.user_id))
      FROM jsonb_to_recordset(p->'caps') AS x(ord integer, ref text, user_id text));
  END IF;

  -- Handles: fenced on (running, epoch); a handle already recorded is left alone.
  -- A folded one is written by its run's finish below (tickInput.ts foldHandles);
  -- an older node still sends it here too, marked folded, and gets its outcome below.
  IF jsonb_array_length(p->'handles') > 0 THEN
    -- Each op read from a map by the row it names, no join (opsBySession).
    v_ops := ${opsBySession(
      "p->'handles'",
      'ord integer, session_id text, epoch integer, backend text, handle text, started_at timestamptz, folded boolean',
      'x.folded IS NOT TRUE',
    )};
    UPDATE sessions s SET backend = ${opOf('backend')}, handle = ${opOf('handle')},
      started_at = coalesce(${opOf('started_at', 'timestamptz')}, s.started_at), updated_at = v_now
    -- "IS TRUE" so the planner cannot prove a partial index over running rows
    -- (see the grant's UPDATE): by key, not among every running row.
    WHERE s.id = ANY (${SESSIONS_OF_OPS})
      AND (s.status = 'running') IS TRUE AND s.epoch = ${opOf('epoch', 'integer')}
      AND (s.backend IS DISTINCT FROM ${opOf('backend')} OR s.handle IS DISTINCT FROM ${opOf('handle')}
           OR (${opOf('started_at', 'timestamptz')} IS NOT NULL
               AND s.started_at IS DISTINCT FROM ${opOf('started_at', 'timestamptz')}));
    GET DIAGNOSTICS v_n = ROW_COUNT;
    IF v_n > 0 THEN v_changed := true; END IF;
  END IF;

  -- Finishes: running@epoch -> final, history, output, column, counts; requeues come back out.
  IF jsonb_array_length(p->'finishes') > 0 THEN
    v_ops := ${opsBySession(
      "p->'finishes'",
      `ord integer, session_id text, epoch integer, status text, exit_code integer, reason text,
        user_recoverable boolean, has_output boolean, out_text text, out_total bigint,
        out_truncated boolean, col text, requeue_id text, h_backend text, h_handle text,
        h_started_at timestamptz`,
    )};
    WITH u AS (
      UPDATE sessions s SET status = ${opOf('status')}, finished_at = v_now,
        exit_code = ${opOf('exit_code', 'integer')},
        failure_reason = CASE WHEN ${opOf('status')} = 'failed' THEN ${opOf('reason')} END,
        user_recoverable = (${opOf('status')} = 'failed' AND ${opOf('user_recoverable', 'boolean')}),
        updated_at = v_now, ended_tick = v_tick, backend = coalesce(${opOf('h_backend')}, s.backend),
        handle = coalesce(${opOf('h_handle')}, s.handle),
        started_at = coalesce(${opOf('h_started_at', 'timestamptz')}, s.started_at)
      WHERE s.id = ANY (${SESSIONS_OF_OPS})
        AND (s.status = 'running') IS TRUE AND s.epoch = ${opOf('epoch', 'integer')}
      RETURNING s.id, s.task_id, s.user_id, s.kind, s.attempt, s.status, ${opOf('ord', 'integer')} AS ord,
        ${opOf('has_output', 'boolean')} AS has_output, ${opOf('out_text')} AS out_text,
        ${opOf('out_total', 'bigint')} AS out_total, ${opOf('out_truncated', 'boolean')} AS out_truncated,
        ${opOf('col')} AS col, ${opOf('requeue_id')} AS requeue_id
    ), o AS (
      INSERT INTO session_outputs (session_id, text, total_bytes, truncated, created_at, tail, tail_whole)
      SELECT u.id, u.out_text, u.out_total, u.out_truncated, v_now,
        right(u.out_text, ${OUTPUT_TAIL_CHARS}), length(u.out_text) <= ${OUTPUT_TAIL_CHARS}
      FROM u WHERE u.has_output
    ), t AS (
      UPDATE tasks SET board_column = CASE WHEN u.requeue_id IS NULL THEN u.col ELSE 'queued' END,
        updated_at = v_now
      FROM u WHERE tasks.id = u.task_id
    ), l AS (
      UPDATE user_lines ln SET running = greatest(0, ln.running - x.n), tick = v_tick
      FROM (SELECT u.user_id, count(*) AS n FROM u GROUP BY u.user_id) x
      WHERE ln.user_id = x.user_id
    )
    SELECT count(*), coalesce(jsonb_agg(jsonb_build_object('ord', u.ord, 'id', u.requeue_id,
        'task_id', u.task_id, 'user_id', u.user_id, 'kind', u.kind, 'attempt', u.attempt + 1,
        'reason', 'requeued after ' || u.id) ORDER BY u.ord)
      FILTER (WHERE u.requeue_id IS NOT NULL AND NOT EXISTS (
        SELECT 1 FROM sessions later WHERE later.task_id = u.task_id AND later.attempt > u.attempt)), '[]')
    INTO v_n, v_rows FROM u;
    IF v_n > 0 THEN
      v_changed := true;
      v_running := greatest(0, v_running - v_n);
    END IF;
    IF jsonb_array_length(v_rows) > 0 THEN
      v_next_join := rt_place(v_rows, true, v_tick, v_now, v_ucap, v_next_join);
    END IF;
    -- A handle folded into its finish (h_ref, tickInput.ts foldHandles) is
    -- checked on the row the finish left, as the handles' outcomes below
    -- check theirs. When the finish applied and the handle holds, the
    -- finish's outcome names it ('hr') and the caller answers it with the
    -- same session: no outcome row of its own (a lookup and a session
    -- rendered in the reply, per job). Otherwise it gets its own outcome.
    -- A finish that applied with no requeue is answered here when the
    -- caller asks ('finished', v_early): its row is final (nothing later in
    -- the tick writes a finished session, and with no retry in the tick
    -- nothing rewrites its card), so it is rendered from the row this
    -- statement reads anyway instead of from a second lookup in the reply.
    SELECT coalesce(jsonb_agg(e.o) FILTER (WHERE e.o IS NOT NULL AND NOT e.early), '[]'),
      json_agg(e.d) FILTER (WHERE e.early)
    INTO v_fo, v_finished
    FROM (SELECT e.o, e.first AND v_early AND k.fin AND x.requeue_id IS NULL AS early,
        CASE WHEN e.first AND v_early AND k.fin AND x.requeue_id IS NULL THEN json_build_object(
          'ref', x.ref, 'kind', 'applied', 'session', ${sessionJson('s', 'v_arr')},
          'task', (SELECT ${taskJson('t', 'v_arr')} FROM tasks t WHERE t.id = s.task_id LIMIT 1),
          'limit', (SELECT t.time_limit_ms FROM tasks t WHERE t.id = s.task_id LIMIT 1),
          'position', NULL, 'next', NULL, 'handle', CASE WHEN k.hk THEN x.h_ref END) END AS d
      FROM jsonb_to_recordset(p->'finishes') AS x(ord integer, ref text, session_id text, epoch integer,
        status text, requeue_id text, h_ord integer, h_ref text, h_backend text, h_handle text,
        h_started_at timestamptz)
      LEFT JOIN LATERAL ${byKey('sessions', 'x.session_id')} s ON true
      CROSS JOIN LATERAL (SELECT coalesce(s.status = x.status AND s.epoch = x.epoch, false) AS fin,
        coalesce(x.h_ref IS NOT NULL AND s.epoch = x.epoch AND s.backend IS NOT DISTINCT FROM x.h_backend
          AND s.handle IS NOT DISTINCT FROM x.h_handle
          AND (x.h_started_at IS NULL OR s.started_at = x.h_started_at), false) AS hk) k
      CROSS JOIN LATERAL (VALUES
        (true, CASE WHEN s.id IS NULL THEN ${NF}
          WHEN k.fin THEN ${A('s.id', 'true')}
            || jsonb_build_object('nid', (SELECT n.id FROM sessions n WHERE n.id = x.requeue_id),
              'hr', CASE WHEN k.hk THEN x.h_ref END)
          ELSE ${STALE('s.status', 's.epoch')} END),
        (false, CASE WHEN x.h_ref IS NULL OR (k.fin AND k.hk) THEN NULL
          WHEN s.id IS NULL THEN ${folded(NF)}
          WHEN k.hk THEN ${folded(A('s.id', 'false'))}
          ELSE ${folded(STALE('s.status', 's.epoch'))} END)) e(first, o)) e;
    v_out := v_out || v_fo;
  END IF;

  -- The handles' outcomes, after the finishes that wrote the folded ones.
  IF jsonb_array_length(p->'handles') > 0 THEN
    v_out := v_out || (SELECT jsonb_agg(CASE WHEN s.id IS NULL THEN ${NF}
        WHEN s.epoch = x.epoch AND s.backend IS NOT DISTINCT FROM x.backend AND s.handle IS NOT DISTINCT FROM x.handle
          AND (x.started_at IS NULL OR s.started_at = x.started_at) THEN ${A('s.id', 'false')}
        ELSE ${STALE('s.status', 's.epoch')} END)
      FROM jsonb_to_recordset(p->'handles') AS x(ord integer, ref text, session_id text, epoch integer,
        backend text, handle text, started_at timestamptz)
      LEFT JOIN LATERAL ${byKey('sessions', 'x.session_id')} s ON true);
  END IF;

  -- Cancels: queued | running @epoch -> cancelled; counts; a queued line closes up behind it.
  IF jsonb_array_length(p->'cancels') > 0 THEN
    v_ops := ${opsBySession(
      "p->'cancels'",
      'ord integer, session_id text, exp_status text, exp_epoch integer, reason text, col text',
    )};
    WITH u AS (
      UPDATE sessions s SET status = 'cancelled', finished_at = v_now, updated_at = v_now,
        ended_tick = v_tick, cancel_reason = ${opOf('reason')}
      WHERE s.id = ANY (${SESSIONS_OF_OPS})
        AND s.status = ${opOf('exp_status')} AND s.epoch = ${opOf('exp_epoch', 'integer')}
      RETURNING s.id, s.task_id, s.user_id, s.turn, ${opOf('exp_status')} AS exp_status, ${opOf('col')} AS col
    ), t AS (
      UPDATE tasks SET board_column = u.col, updated_at = v_now
      FROM u WHERE tasks.id = u.task_id
    ), l AS (
      UPDATE user_lines ln SET queued = greatest(0, ln.queued - x.q),
        running = greatest(0, ln.running - x.r), tick = v_tick
      FROM (SELECT u.user_id, count(*) FILTER (WHERE u.exp_status = 'queued') AS q,
              count(*) FILTER (WHERE u.exp_status = 'running') AS r
            FROM u GROUP BY u.user_id) x
      WHERE ln.user_id = x.user_id
    )
    SELECT count(*), count(*) FILTER (WHERE u.exp_status = 'running'),
      coalesce(jsonb_agg(jsonb_build_object('user_id', u.user_id, 'turn', u.turn))
        FILTER (WHERE u.exp_status = 'queued' AND u.turn IS NOT NULL), '[]')
    INTO v_n, v_r, v_cq FROM u;
    IF v_n > 0 THEN
      v_changed := true;
      v_running := greatest(0, v_running - v_r);
    END IF;
    -- Keep turns contiguous: each later session moves up one per cancelled turn before it.
    IF jsonb_array_length(v_cq) > 0 THEN
      WITH c AS (SELECT * FROM jsonb_to_recordset(v_cq) AS x(user_id text, turn bigint)),
      m AS (SELECT c.user_id, min(c.turn) AS t0 FROM c GROUP BY c.user_id)
      UPDATE sessions s SET turn = s.turn - (SELECT count(*) FROM c WHERE c.user_id = s.user_id AND c.turn < s.turn)
      FROM m WHERE s.user_id = ANY (ARRAY(SELECT m.user_id FROM m)) AND s.user_id = m.user_id
        AND s.status = 'queued' AND s.turn > m.t0;
    END IF;
    v_out := v_out || (SELECT jsonb_agg(CASE WHEN s.id IS NULL THEN ${NF}
        WHEN s.status = 'cancelled' AND s.epoch = x.exp_epoch THEN ${A('s.id', 'true')}
        ELSE ${STALE('s.status', 's.epoch')} END)
      FROM jsonb_to_recordset(p->'cancels') AS x(ord integer, ref text, session_id text, exp_epoch integer)
      LEFT JOIN LATERAL ${byKey('sessions', 'x.session_id')} s ON true);
  END IF;

${APPEND_PHASES}
${GRANT_AND_REPLY}
END $$`;
