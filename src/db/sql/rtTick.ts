/**
 * `rt_tick(p jsonb) RETURNS jsonb`: one dispatch tick in one statement (the
 * contract is src/db/tickTypes.ts; the JSON shape `p` is built by
 * src/db/tickInput.ts). Every phase is one set-based statement over
 * `jsonb_to_recordset`, in the contract's order: caps, handles, finishes
 * (with head-of-line requeues), cancels (with the renumber), retries,
 * enqueues, then the grants. No EXCEPTION blocks: a subtransaction per op
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

/** The NOTIFY channel a tick that changed anything signals; payload `<tick> <owner>`. */
export const TICK_CHANNEL = 'roundtable_tick';

const A = (sid: string, task: string) =>
  `jsonb_build_object('o', x.ord, 'r', x.ref, 'k', 'a', 'sid', ${sid}, 'tk', ${task})`;
const STALE = (status: string, epoch: string) =>
  `jsonb_build_object('o', x.ord, 'r', x.ref, 'k', 's', 'st', ${status}, 'ep', ${epoch})`;
const NF = `jsonb_build_object('o', x.ord, 'r', x.ref, 'k', 'n')`;
const EVENT_COLS =
  'session_events (session_id, from_status, to_status, reason, node, epoch, at, tick)';

export const RT_TICK = `CREATE FUNCTION rt_tick(p jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE SET plan_cache_mode = force_generic_plan
  SET enable_hashjoin = off SET enable_mergejoin = off AS $$
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
  v_cq jsonb;
  v_o jsonb;
  v_n integer;
  v_r integer;
  v_free integer;
  v_granted jsonb := '[]';
  v_gids text[] := '{}';
  v_over boolean;
BEGIN
  PERFORM pg_advisory_xact_lock(${LOCK_NAMESPACE}, ${ADVISORY_LOCKS.claimSlot});
  SELECT * INTO st FROM dispatch_state;
  IF NOT FOUND THEN st := rt_state_row(); END IF;
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
  IF jsonb_array_length(p->'handles') > 0 THEN
    WITH h AS (
      SELECT DISTINCT ON (x.session_id) x.* FROM jsonb_to_recordset(p->'handles')
        AS x(ord integer, session_id text, epoch integer, backend text, handle text, started_at timestamptz)
      ORDER BY x.session_id, x.ord
    )
    UPDATE sessions s SET backend = h.backend, handle = h.handle,
      started_at = coalesce(h.started_at, s.started_at), updated_at = v_now
    FROM h WHERE s.id = h.session_id AND s.status = 'running' AND s.epoch = h.epoch
      AND (s.backend IS DISTINCT FROM h.backend OR s.handle IS DISTINCT FROM h.handle
           OR (h.started_at IS NOT NULL AND s.started_at IS DISTINCT FROM h.started_at));
    GET DIAGNOSTICS v_n = ROW_COUNT;
    IF v_n > 0 THEN v_changed := true; END IF;
    v_out := v_out || (SELECT jsonb_agg(CASE WHEN s.id IS NULL THEN ${NF}
        WHEN s.epoch = x.epoch AND s.backend IS NOT DISTINCT FROM x.backend AND s.handle IS NOT DISTINCT FROM x.handle
          AND (x.started_at IS NULL OR s.started_at = x.started_at) THEN ${A('s.id', 'false')}
        ELSE ${STALE('s.status', 's.epoch')} END)
      FROM jsonb_to_recordset(p->'handles') AS x(ord integer, ref text, session_id text, epoch integer,
        backend text, handle text, started_at timestamptz)
      LEFT JOIN sessions s ON s.id = x.session_id);
  END IF;

  -- Finishes: running@epoch -> final, history, output, column, counts; requeues come back out.
  IF jsonb_array_length(p->'finishes') > 0 THEN
    WITH f AS (
      SELECT DISTINCT ON (x.session_id) x.* FROM jsonb_to_recordset(p->'finishes')
        AS x(ord integer, session_id text, epoch integer, status text, exit_code integer, reason text,
          user_recoverable boolean, has_output boolean, out_text text, out_total bigint,
          out_truncated boolean, col text, requeue_id text)
      ORDER BY x.session_id, x.ord
    ), u AS (
      UPDATE sessions s SET status = f.status, finished_at = v_now, exit_code = f.exit_code,
        failure_reason = CASE WHEN f.status = 'failed' THEN f.reason END,
        user_recoverable = (f.status = 'failed' AND f.user_recoverable), updated_at = v_now
      FROM f WHERE s.id = f.session_id AND s.status = 'running' AND s.epoch = f.epoch
      RETURNING s.id, s.task_id, s.user_id, s.kind, s.attempt, s.owner_node, s.epoch, s.status, f.ord,
        f.reason, f.has_output, f.out_text, f.out_total, f.out_truncated, f.col, f.requeue_id
    ), e AS (
      INSERT INTO ${EVENT_COLS}
      SELECT u.id, 'running', u.status, CASE WHEN u.status = 'failed' THEN u.reason END,
        u.owner_node, u.epoch, v_now, v_tick FROM u
    ), o AS (
      INSERT INTO session_outputs (session_id, text, total_bytes, truncated, created_at)
      SELECT u.id, u.out_text, u.out_total, u.out_truncated, v_now FROM u WHERE u.has_output
    ), t AS (
      UPDATE tasks SET board_column = CASE WHEN u.requeue_id IS NULL THEN u.col ELSE 'queued' END,
        updated_at = v_now
      FROM u WHERE tasks.id = u.task_id
    ), l AS (
      UPDATE user_lines ln SET running = greatest(0, ln.running - x.n), tick = v_tick
      FROM (SELECT u.user_id, count(*) AS n FROM u GROUP BY u.user_id) x WHERE ln.user_id = x.user_id
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
    v_out := v_out || (SELECT jsonb_agg(CASE WHEN s.id IS NULL THEN ${NF}
        WHEN s.status = x.status AND s.epoch = x.epoch THEN ${A('s.id', 'true')}
          || jsonb_build_object('nid', (SELECT n.id FROM sessions n WHERE n.id = x.requeue_id))
        ELSE ${STALE('s.status', 's.epoch')} END)
      FROM jsonb_to_recordset(p->'finishes') AS x(ord integer, ref text, session_id text, epoch integer,
        status text, requeue_id text)
      LEFT JOIN sessions s ON s.id = x.session_id);
  END IF;

  -- Cancels: queued | running @epoch -> cancelled; counts; a queued line closes up behind it.
  IF jsonb_array_length(p->'cancels') > 0 THEN
    WITH c AS (
      SELECT DISTINCT ON (x.session_id) x.* FROM jsonb_to_recordset(p->'cancels')
        AS x(ord integer, session_id text, exp_status text, exp_epoch integer, reason text, col text)
      ORDER BY x.session_id, x.ord
    ), u AS (
      UPDATE sessions s SET status = 'cancelled', finished_at = v_now, updated_at = v_now
      FROM c WHERE s.id = c.session_id AND s.status = c.exp_status AND s.epoch = c.exp_epoch
      RETURNING s.id, s.task_id, s.user_id, s.epoch, s.turn, c.exp_status, c.reason, c.col
    ), e AS (
      INSERT INTO ${EVENT_COLS}
      SELECT u.id, u.exp_status, 'cancelled', u.reason, v_owner, u.epoch, v_now, v_tick FROM u
    ), t AS (
      UPDATE tasks SET board_column = u.col, updated_at = v_now FROM u WHERE tasks.id = u.task_id
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
      FROM m WHERE s.user_id = m.user_id AND s.status = 'queued' AND s.turn > m.t0;
    END IF;
    v_out := v_out || (SELECT jsonb_agg(CASE WHEN s.id IS NULL THEN ${NF}
        WHEN s.status = 'cancelled' AND s.epoch = x.exp_epoch THEN ${A('s.id', 'true')}
        ELSE ${STALE('s.status', 's.epoch')} END)
      FROM jsonb_to_recordset(p->'cancels') AS x(ord integer, ref text, session_id text, exp_epoch integer)
      LEFT JOIN sessions s ON s.id = x.session_id);
  END IF;

  -- Retries: compare-and-set on the latest attempt; a new attempt at the back of the line.
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
      LEFT JOIN tasks t ON t.id = r.task_id AND (r.actor IS NULL OR t.user_id = r.actor)
      LEFT JOIN LATERAL (SELECT s.id, s.status, s.epoch, s.attempt, s.kind, s.user_id FROM sessions s
        WHERE s.task_id = t.id ORDER BY s.attempt DESC LIMIT 1) lt ON true
      LEFT JOIN sessions mine ON mine.id = r.session_id
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
        EXISTS (SELECT 1 FROM tasks t WHERE t.id = x.task_id) AS task_taken
      FROM jsonb_to_recordset(p->'enqueues') AS x(ord integer, ref text, task_id text, session_id text,
        user_id text, title text, spec jsonb, col text)
      LEFT JOIN sessions ex ON ex.id = x.session_id
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

  -- Grants: the first free eligible users by (head_turn, join_seq), each one's
  -- first (room) sessions by turn, merged by key. No session outside those
  -- users can beat the free-th key (each chosen user's head is at or before it).
  v_free := least(v_want, v_gcap - v_running);
  IF v_free > 0 THEN
    WITH users AS (
      SELECT l.user_id, l.join_seq, l.max_running - l.running AS room FROM user_lines l
      WHERE l.eligible ORDER BY l.head_turn, l.join_seq LIMIT v_free
    ), cand AS (
      SELECT c.id FROM users u CROSS JOIN LATERAL (
        SELECT s.id, s.turn FROM sessions s
        WHERE s.status = 'queued' AND s.user_id = u.user_id AND s.turn IS NOT NULL
        ORDER BY s.turn LIMIT u.room) c
      ORDER BY c.turn, u.join_seq LIMIT v_free
    ), g AS (
      -- By primary key from an array: a join to the CTE let the generic
      -- plan walk every queued row of the line as the outer side (O(depth)).
      UPDATE sessions s SET status = 'running', epoch = s.epoch + 1, owner_node = v_owner,
        claimed_at = v_now, updated_at = v_now
      WHERE s.id = ANY (ARRAY(SELECT cand.id FROM cand)) AND s.status = 'queued'
      RETURNING s.*
    ), e AS (
      INSERT INTO ${EVENT_COLS}
      SELECT g.id, 'queued', 'running', 'claimed', v_owner, g.epoch, v_now, v_tick FROM g
    ), lu AS (
      UPDATE user_lines l SET running = l.running + x.n, queued = l.queued - x.n,
        head_turn = l.head_turn + x.n, tick = v_tick
      FROM (SELECT g.user_id, count(*) AS n FROM g GROUP BY g.user_id) x WHERE l.user_id = x.user_id
      RETURNING l.running > l.max_running AS over
    )
    SELECT count(*), coalesce(jsonb_agg(jsonb_build_object('session', to_jsonb(g), 'task', to_jsonb(t))
        ORDER BY g.turn, g.join_seq), '[]'), coalesce(array_agg(g.id), '{}'),
      coalesce((SELECT bool_or(lu.over) FROM lu), false)
    INTO v_n, v_granted, v_gids, v_over FROM g JOIN tasks t ON t.id = g.task_id;
    -- Belt and braces: the pick above never exceeds a cap; if it ever did, nothing commits.
    IF v_over THEN
      RAISE EXCEPTION 'rt_tick: a grant would exceed a user cap' USING ERRCODE = 'check_violation';
    END IF;
    IF v_n > 0 THEN
      v_changed := true;
      v_running := v_running + v_n;
      IF v_running > v_gcap THEN
        RAISE EXCEPTION 'rt_tick: a grant would exceed the global cap' USING ERRCODE = 'check_violation';
      END IF;
    END IF;
  END IF;

  IF v_changed THEN
    UPDATE dispatch_state SET tick = v_tick, running = v_running, global_cap = v_gcap,
      default_user_cap = v_ucap, next_join_seq = v_next_join;
    -- The owner rides along: a node skips its own ticks (it has their replies).
    PERFORM pg_notify('${TICK_CHANNEL}', v_tick::text || ' ' || v_owner);
  ELSE
    v_tick := st.tick;
  END IF;

  -- The outcomes, with exact positions for the queued sessions they name,
  -- computed in one pass over the active lines (not one function call each).
  WITH x AS (
    SELECT * FROM jsonb_to_recordset(v_out) AS x(o integer, r text, k text, sid text, tk boolean,
      nid text, st text, ep integer, u text)
  ), ps AS (
    SELECT q.id, 1 + coalesce(sum(greatest(0, least(l.queued::bigint,
        q.turn - l.head_turn + CASE WHEN l.join_seq < q.join_seq THEN 1 ELSE 0 END))), 0) AS pos
    FROM sessions q LEFT JOIN user_lines l ON l.queued > 0 AND l.head_turn <= q.turn
    WHERE q.id IN (SELECT x.sid FROM x UNION SELECT x.nid FROM x) AND q.status = 'queued'
      AND q.turn IS NOT NULL AND q.join_seq IS NOT NULL
    GROUP BY q.id
  )
  SELECT coalesce(jsonb_agg(CASE x.k
      WHEN 'a' THEN jsonb_build_object('ref', x.r, 'kind', 'applied', 'session', to_jsonb(s),
        'task', CASE WHEN x.tk THEN to_jsonb(t) END,
        'position', CASE WHEN s.status = 'queued' THEN sp.pos WHEN s.id = ANY (v_gids) THEN 0 END,
        'next', CASE WHEN n.id IS NOT NULL THEN jsonb_build_object('session', to_jsonb(n),
          'position', CASE WHEN n.status = 'queued' THEN np.pos WHEN n.id = ANY (v_gids) THEN 0 END) END)
      WHEN 's' THEN jsonb_build_object('ref', x.r, 'kind', 'stale',
        'actual', jsonb_build_object('status', x.st, 'epoch', x.ep))
      WHEN 'c' THEN jsonb_build_object('ref', x.r, 'kind', 'cap', 'line', to_jsonb(l))
      ELSE jsonb_build_object('ref', x.r, 'kind', 'not_found') END ORDER BY x.o), '[]')
  INTO v_o
  FROM x
  LEFT JOIN sessions s ON s.id = x.sid
  LEFT JOIN tasks t ON x.tk AND t.id = s.task_id
  LEFT JOIN sessions n ON n.id = x.nid
  LEFT JOIN user_lines l ON l.user_id = x.u
  LEFT JOIN ps sp ON sp.id = s.id
  LEFT JOIN ps np ON np.id = n.id;

  RETURN jsonb_build_object(
    'tick', v_tick,
    'outcomes', v_o,
    'granted', v_granted,
    'owned', CASE WHEN coalesce((p->>'resync')::boolean, false) THEN (
      SELECT coalesce(jsonb_agg(jsonb_build_object('session', to_jsonb(s), 'task', to_jsonb(t))
        ORDER BY s.claimed_at, s.id), '[]')
      FROM sessions s JOIN tasks t ON t.id = s.task_id
      WHERE s.status = 'running' AND s.owner_node = v_owner) END,
    'running', v_running,
    'lines', CASE WHEN v_changed THEN (SELECT coalesce(jsonb_agg(to_jsonb(l) ORDER BY l.user_id), '[]')
      FROM user_lines l WHERE l.tick = v_tick) ELSE '[]'::jsonb END);
END $$`;
