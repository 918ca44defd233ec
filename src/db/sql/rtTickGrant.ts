/**
 * The end of `rt_tick`: the grants (the round-robin pick, the belt-and-braces
 * cap assertion), the state row and NOTIFY, and the reply with exact
 * positions. Spliced into the function body by rtTick.ts; the variables are its.
 */
import { CHANGED_TICK, changedLines, changedSessions } from './changesSql.js';
import { byKey } from './outcomeSql.js';
import { lineJson, sessionJson, taskJson } from './rowJson.js';
import { ACTIVE_LINES, positionAmong } from './rtPlace.js';
import { TICK_CHANNEL } from './tickChannel.js';

/** An `applied` outcome's object, open for one more key (the reply below closes it). */
const APPLIED = `json_build_object('ref', x.r, 'kind', 'applied', 'session', ${sessionJson('s', 'v_arr')},
        'task', CASE WHEN x.tk THEN ${taskJson('t', 'v_arr')} END,
        'limit', CASE WHEN x.tk THEN t.time_limit_ms END,
        'position', CASE WHEN s.status = 'queued' THEN sp.pos WHEN s.id = ANY (v_gids) THEN 0 END,
        'next', CASE WHEN n.id IS NOT NULL THEN json_build_object('session', ${sessionJson('n', 'v_arr')},
          'position', CASE WHEN n.status = 'queued' THEN np.pos WHEN n.id = ANY (v_gids) THEN 0 END) END`;

/**
 * The grant's pick and writes, as the head of one statement (CTEs `users`,
 * `cand`, `g`: the granted rows, `lu`: their lines' counts, `over` when a
 * line would pass its cap), over the variables v_free, v_owner, v_now and
 * v_tick. rt_tick ends it with its reply; the peers bench's floor
 * (bench/peers/systems/roundtableFloor.ts) with the granted ids alone, so
 * both measure the same pick and the same writes.
 */
export const GRANT_WRITES = `    WITH users AS (
      SELECT l.user_id, l.join_seq, l.max_running - l.running AS room FROM user_lines l
      WHERE l.eligible ORDER BY l.head_turn, l.join_seq LIMIT v_free
    ), cand AS (
      SELECT c.id FROM users u CROSS JOIN LATERAL (
        SELECT s.id, s.turn FROM sessions s
        WHERE s.status = 'queued' AND s.user_id = u.user_id AND s.turn IS NOT NULL
        ORDER BY s.turn LIMIT u.room) c
      ORDER BY c.turn, u.join_seq LIMIT v_free
    ), g AS (
      UPDATE sessions s SET status = 'running', epoch = s.epoch + 1, owner_node = v_owner,
        claimed_at = v_now, updated_at = v_now, claimed_tick = v_tick
      -- By primary key from an array, and "IS TRUE" so the planner cannot
      -- prove the partial index over queued rows: the generic plan is made
      -- once per connection, often on an empty table, and would then walk
      -- every queued row of the line (O(depth)) believing the index tiny.
      WHERE s.id = ANY (ARRAY(SELECT cand.id FROM cand)) AND (s.status = 'queued') IS TRUE
      RETURNING s.*
    ), lu AS (
      UPDATE user_lines l SET running = l.running + x.n, queued = l.queued - x.n,
        head_turn = l.head_turn + x.n, tick = v_tick
      FROM (SELECT g.user_id, count(*) AS n FROM g GROUP BY g.user_id) x
      WHERE l.user_id = x.user_id
      RETURNING l.running > l.max_running AS over
    )
`;

export const GRANT_AND_REPLY = `  -- Grants: the first free eligible users by (head_turn, join_seq), each one's
  -- first (room) sessions by turn, merged by key. No session outside those
  -- users can beat the free-th key (each chosen user's head is at or before it).
  v_free := least(v_want, v_gcap - v_running);
  IF v_free > 0 THEN
${GRANT_WRITES}    SELECT count(*), coalesce(json_agg(json_build_object('session', ${sessionJson('g', 'v_arr')}, 'task', ${taskJson('t', 'v_arr')}, 'limit', t.time_limit_ms)
        ORDER BY g.turn, g.join_seq), '[]'), coalesce(array_agg(g.id), '{}'),
      coalesce((SELECT bool_or(lu.over) FROM lu), false)
    INTO v_n, v_granted, v_gids, v_over FROM g CROSS JOIN LATERAL ${byKey('tasks', 'g.task_id')} t;
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
      default_user_cap = v_ucap, next_join_seq = v_next_join
      WHERE id;
    -- Who ticked: the node of the history's claims and cancels (session_history).
    INSERT INTO dispatch_ticks (tick, owner, at) VALUES (v_tick, v_owner, v_now);
    -- The owner rides along: a node skips its own ticks (it has their replies).
    -- "grantable" when a grant is still possible after this tick (room under
    -- the global cap and a line with work and room): only then do the other
    -- nodes tick for it. At the cap, the node whose run ends grants the next
    -- one in the same tick, so nobody else needs to ask.
    -- Only when another boot has a heartbeat row: a node alone has nobody to
    -- tell, and every listening backend spends a transaction of its own on
    -- each notification it is sent, its own included (a node learns of the
    -- ticks before its first beat from its first tick's reply, since; and a
    -- tick of a client with no row, the CLI, always finds the nodes' rows).
    -- A full tick goes out only if another boot's board is watched
    -- (node_heartbeats.watching, migration 12): a node nobody watches needs
    -- no tick for it, and learns its changes from its next reply or poll.
    -- The flag is written under this tick's lock (src/db/nodeHeartbeats.ts setWatching):
    -- a tick either sees it or committed before the watcher's catch-up read.
    SELECT count(*) > 0, coalesce(bool_or(h.watching), false) INTO v_others, v_watched
      FROM node_heartbeats h WHERE h.owner <> v_owner;
    IF v_others THEN
      v_grantable := v_running < v_gcap AND EXISTS (SELECT 1 FROM user_lines e WHERE e.eligible);
      IF v_grantable OR v_watched THEN
        PERFORM pg_notify('${TICK_CHANNEL}', v_tick::text || ' ' || v_owner
          || CASE WHEN v_grantable THEN ' grantable' ELSE ' full' END);
      END IF;
    END IF;
  ELSE
    v_tick := st.tick;
  END IF;

  -- The outcomes, with exact positions for the queued sessions they name,
  -- computed against the active lines read once. A tick with no ops (a
  -- grant-only tick, a poll) skips the statement: its start-up alone is
  -- ~100 us, a third of an empty tick, and such ticks hold the lock too.
  IF jsonb_array_length(v_out) = 0 THEN
    v_reply := '[]'::json;
  ELSE
  WITH x AS (
    SELECT * FROM jsonb_to_recordset(v_out) AS x(o integer, r text, k text, sid text, tk boolean,
      nid text, hr text, st text, ep integer, u text, rp boolean)
  ), ${ACTIVE_LINES}
  SELECT coalesce(json_agg(CASE x.k
      -- With a handle folded into this finish and applied with it (rtTick.ts), its ref.
      WHEN 'a' THEN CASE WHEN x.rp THEN ${APPLIED}, 'replayed', true)
        WHEN x.hr IS NULL THEN ${APPLIED}) ELSE ${APPLIED}, 'handle', x.hr) END
      WHEN 's' THEN json_build_object('ref', x.r, 'kind', 'stale',
        'actual', json_build_object('status', x.st, 'epoch', x.ep))
      WHEN 'c' THEN json_build_object('ref', x.r, 'kind', 'cap', 'line', ${lineJson('l', 'v_arr')})
      ELSE json_build_object('ref', x.r, 'kind', 'not_found') END ORDER BY x.o), '[]')
  INTO v_reply
  FROM x
  LEFT JOIN LATERAL ${byKey('sessions', 'x.sid')} s ON true
  LEFT JOIN LATERAL (SELECT * FROM tasks k WHERE x.tk AND k.id = s.task_id LIMIT 1) t ON true
  LEFT JOIN LATERAL ${byKey('sessions', 'x.nid')} n ON true
  LEFT JOIN LATERAL ${byKey('user_lines', 'x.u', 'user_id')} l ON true
  LEFT JOIN LATERAL ${positionAmong('s')} sp ON true
  LEFT JOIN LATERAL ${positionAmong('n')} np ON true;
  END IF;

  -- The reply's parts, each read only when asked for: as one expression
  -- with its subqueries it started every subplan on every tick (~60 us).
  -- With "since" (the last tick the caller has every change of) and other
  -- ticks after it: what those ticks changed rides along, so the caller
  -- needs no read of its own for them (the feed, src/actors/runtimeFeed.ts).
  IF coalesce((p->>'resync')::boolean, false) THEN
    SELECT coalesce(json_agg(json_build_object('session', ${sessionJson('s', 'v_arr')}, 'task', ${taskJson('t', 'v_arr')}, 'limit', t.time_limit_ms)
        ORDER BY s.claimed_at, s.id), '[]')
      INTO v_owned
      FROM sessions s CROSS JOIN LATERAL ${byKey('tasks', 's.task_id')} t
      WHERE s.status = 'running' AND s.owner_node = v_owner;
  END IF;
  -- A caller that says how many changed sessions may ride (changes_max)
  -- gets a larger set as a flag instead: it reads them with the feed, off
  -- this lock, which every node's tick waits for (three nodes enqueueing
  -- at once: sets of ~1,000 sessions, ~25 ms each, built under it). The
  -- probe reads at most changes_max + 1 index entries.
  IF v_since IS NOT NULL AND v_since < st.tick THEN
    IF v_cmax IS NOT NULL AND (SELECT count(*) FROM (SELECT 1 FROM sessions s
        WHERE ${CHANGED_TICK} > v_since AND ${CHANGED_TICK} <= st.tick LIMIT v_cmax + 1) c) > v_cmax THEN
      v_deferred := true;
    ELSE
      v_changes := ${changedSessions('v_since', 'st.tick', 'v_tail', 'v_arr', null, 'NOT v_nospec')};
    END IF;
    v_lines := ${changedLines('v_since', 'v_arr')};
  ELSIF v_changed THEN
    SELECT coalesce(json_agg(${lineJson('l', 'v_arr')} ORDER BY l.user_id), '[]') INTO v_lines
      FROM user_lines l WHERE l.tick = v_tick;
  END IF;

  RETURN json_build_object(
    'tick', v_tick,
    -- Whether this tick wrote anything: a tick that did not answers the
    -- current number, which may be another node's tick.
    'changed', v_changed,
    'outcomes', v_reply,
    'granted', v_granted,
    'owned', v_owned,
    'running', v_running,
    'changes', v_changes,
    -- More changed sessions than changes_max: read them apart (null: none left).
    'changes_deferred', v_deferred,
    'lines', v_lines,
    -- Finishes answered as their phase ended (rtTick.ts); null when none.
    'finished', v_finished);
`;
