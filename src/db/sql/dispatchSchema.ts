/**
 * Migration 4's tables and backfill: the dispatch engine's state in rows
 * (docs/data.md, "Dispatch"). The round-robin order of docs/runner-pool.md
 * moves from the node's memory into `sessions.turn` / `join_seq` and one
 * `user_lines` row per user, so every node's tick decides against one order.
 */

/** Caps the first tick overwrites: the documented defaults (docs/runner-pool.md, Caps). */
export const INITIAL_CAPS = { globalCap: 20, defaultUserCap: 2 } as const;

// Hot, small and updated on every tick: vacuum after a fixed number of dead
// rows instead of a fraction of the table (which for a one-row table never
// triggers early enough). Both engines accept these reloptions.
const AUTOVACUUM = `(autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 1000,
  autovacuum_analyze_scale_factor = 0, autovacuum_analyze_threshold = 1000)`;

export const DISPATCH_SCHEMA: readonly string[] = [
  // A queued session's key is (turn, join_seq); kept after the grant (harmless, and a post-mortem can read it).
  'ALTER TABLE sessions ADD COLUMN turn bigint, ADD COLUMN join_seq bigint',
  // A user's line in turn order: the grant's lateral pick and the cancel renumber.
  `CREATE INDEX sessions_queued_line_idx ON sessions (user_id, turn) WHERE status = 'queued'`,
  // Updated several times per tick: fillfactor 50 leaves room on the page
  // for the new versions. Every update changes an indexed column (head_turn,
  // queued, tick), so none is HOT and the dead versions wait for a vacuum:
  // PGlite never autovacuums, so the Reconciler calls vacuumDispatch()
  // (3,000 ticks of 20 jobs without one: 179k dead rows, ticks 9 -> 36 ms).
  // An index-free table (every update HOT) was tried and rejected: on PG 15
  // the model test's ticks then took seconds (not yet understood).
  `CREATE TABLE user_lines (
    user_id text PRIMARY KEY CHECK (length(user_id) BETWEEN 1 AND 128),
    head_turn bigint NOT NULL,
    queued integer NOT NULL CHECK (queued >= 0),
    running integer NOT NULL CHECK (running >= 0),
    join_seq bigint NOT NULL,
    max_running integer NOT NULL CHECK (max_running >= 0),
    has_override boolean NOT NULL,
    tick bigint NOT NULL,
    eligible boolean GENERATED ALWAYS AS (queued > 0 AND running < max_running) STORED
  ) WITH (fillfactor = 50)`,
  // The eligible-user heap of PoolIndex, as an index: the first F eligible users.
  'CREATE INDEX user_lines_eligible_idx ON user_lines (head_turn, join_seq) WHERE eligible',
  // The floor a joining user takes, and the O(active users) positions.
  'CREATE INDEX user_lines_active_idx ON user_lines (head_turn) WHERE queued > 0',
  // The board's change feed: lines a tick touched.
  'CREATE INDEX user_lines_tick_idx ON user_lines (tick)',
  `CREATE TABLE dispatch_state (
    id boolean PRIMARY KEY DEFAULT true CHECK (id),
    running integer NOT NULL CHECK (running >= 0),
    global_cap integer NOT NULL CHECK (global_cap >= 0),
    default_user_cap integer NOT NULL CHECK (default_user_cap >= 0),
    tick bigint NOT NULL CHECK (tick >= 0),
    next_join_seq bigint NOT NULL CHECK (next_join_seq >= 0)
  )`,
  // Null for writes outside ticks (the pre-tick repositories).
  'ALTER TABLE session_events ADD COLUMN tick bigint',
  'CREATE INDEX session_events_tick_idx ON session_events (tick) WHERE tick IS NOT NULL',
  `ALTER TABLE sessions SET ${AUTOVACUUM}`,
  `ALTER TABLE user_lines SET ${AUTOVACUUM}`,
  `ALTER TABLE dispatch_state SET ${AUTOVACUUM}`,

  // Backfill, as the in-memory pool's boot did it: every line starts at turn
  // 0, sessions in (enqueued_at, id) order, users join in the order of their
  // oldest queued row.
  `WITH q AS (
     SELECT id, user_id, row_number() OVER (PARTITION BY user_id ORDER BY enqueued_at, id) - 1 AS turn
     FROM sessions WHERE status = 'queued'
   ), j AS (
     SELECT user_id, row_number() OVER (ORDER BY enqueued_at, id) - 1 AS js
     FROM (SELECT DISTINCT ON (user_id) user_id, enqueued_at, id FROM sessions
           WHERE status = 'queued' ORDER BY user_id, enqueued_at, id) oldest
   )
   UPDATE sessions s SET turn = q.turn, join_seq = j.js
   FROM q JOIN j ON j.user_id = q.user_id WHERE s.id = q.id`,
  // One line per user with live work or an override (an override's line
  // must exist so the tick never reads user_caps on its hot path).
  `INSERT INTO user_lines (user_id, head_turn, queued, running, join_seq, max_running, has_override, tick)
   SELECT u.user_id, 0,
     (SELECT count(*) FROM sessions s WHERE s.user_id = u.user_id AND s.status = 'queued'),
     (SELECT count(*) FROM sessions s WHERE s.user_id = u.user_id AND s.status = 'running'),
     coalesce((SELECT min(s.join_seq) FROM sessions s WHERE s.user_id = u.user_id AND s.status = 'queued'), 0),
     coalesce(c.max_running, ${INITIAL_CAPS.defaultUserCap}), c.user_id IS NOT NULL, 0
   FROM (SELECT user_id FROM sessions WHERE status IN ('queued', 'running')
         UNION SELECT user_id FROM user_caps) u
   LEFT JOIN user_caps c ON c.user_id = u.user_id`,
  `INSERT INTO dispatch_state (running, global_cap, default_user_cap, tick, next_join_seq)
   SELECT (SELECT count(*) FROM sessions WHERE status = 'running'),
     ${INITIAL_CAPS.globalCap}, ${INITIAL_CAPS.defaultUserCap}, 0,
     (SELECT count(DISTINCT user_id) FROM sessions WHERE status = 'queued')`,
];
