/**
 * Migration 7: a tick writes no history rows. Every status change a tick
 * makes is already a write of its session row, so the row carries the
 * facts of its three transitions (the tick that queued, claimed and ended
 * it, the reasons a row has no other column for), one `dispatch_ticks` row
 * per tick says which node ticked, and the history is derived from them by
 * the `session_history` view (docs/data.md, "History"). Writes outside
 * ticks (adopt, the pre-tick repositories) still append `session_events`
 * rows, and the view shows both, so a store upgraded with history keeps it.
 *
 * Measured (docs/data.md, "What a job costs"): 3 heap rows and 9 index
 * entries per job fewer; the session row grows by three bigints.
 */
import { CHANGED_TICK } from './changesSql.js';
import { RT_PLACE } from './rtPlace.js';
import { RT_TICK } from './rtTick.js';

/**
 * The order of a tick's writes, as `session_history.phase`: within one tick,
 * finishes, then the next attempts they queued, then cancels, then other
 * new queued sessions (retries and enqueues), then grants; writes outside
 * ticks (tick null) after them. Ticks are serial, so `(tick, phase)` is the
 * order the database decided in (a replay of it is exact).
 */
const PHASE = (from: string, to: string, reason: string) => `CASE
    WHEN ${from} IS NULL THEN CASE WHEN ${reason} LIKE 'requeued after %' THEN 2 ELSE 4 END
    WHEN ${to} = 'cancelled' THEN 3
    WHEN ${from} = 'queued' AND ${to} = 'running' THEN 5
    WHEN ${from} = 'running' AND ${to} = 'running' THEN 6
    ELSE 1 END`;

/** Within one session: creation, claims and adoptions, the end; ordered by (epoch, step). */
const STEP = (from: string, to: string) =>
  `CASE WHEN ${from} IS NULL THEN 0 WHEN ${to} IN ('queued', 'running') THEN 1 ELSE 2 END`;

export const SESSION_HISTORY_VIEW = `CREATE VIEW session_history AS
  SELECT e.id::text AS id, e.session_id, s.user_id, e.from_status, e.to_status, e.reason, e.node,
    e.epoch, e.at, e.tick, ${STEP('e.from_status', 'e.to_status')} AS step,
    ${PHASE('e.from_status', 'e.to_status', 'e.reason')} AS phase
  FROM session_events e JOIN sessions s ON s.id = e.session_id
  UNION ALL
  -- Queued by a tick: a queued session's epoch is 0 (nothing bumps it before its claim).
  SELECT s.id || '/queued', s.id, s.user_id, NULL, 'queued', coalesce(s.queued_reason, 'created'),
    NULL, 0, s.enqueued_at, s.queued_tick, 0,
    CASE WHEN s.queued_reason LIKE 'requeued after %' THEN 2 ELSE 4 END
  FROM sessions s WHERE s.queued_tick IS NOT NULL
  UNION ALL
  -- Claimed by a tick: epoch 0 -> 1, by the node that ticked.
  SELECT s.id || '/claimed', s.id, s.user_id, 'queued', 'running', 'claimed', k.owner, 1,
    s.claimed_at, s.claimed_tick, 1, 5
  FROM sessions s JOIN dispatch_ticks k ON k.tick = s.claimed_tick WHERE s.claimed_tick IS NOT NULL
  UNION ALL
  -- Ended by a tick: a finish is its owner's, a cancel the ticking node's.
  SELECT s.id || '/ended', s.id, s.user_id,
    CASE WHEN s.claimed_at IS NULL THEN 'queued' ELSE 'running' END, s.status,
    CASE WHEN s.status = 'cancelled' THEN s.cancel_reason WHEN s.status = 'failed' THEN s.failure_reason END,
    CASE WHEN s.status = 'cancelled' THEN k.owner ELSE s.owner_node END,
    s.epoch, s.finished_at, s.ended_tick, 2, CASE WHEN s.status = 'cancelled' THEN 3 ELSE 1 END
  FROM sessions s LEFT JOIN dispatch_ticks k ON k.tick = s.ended_tick WHERE s.ended_tick IS NOT NULL`;

/** The same `CREATE FUNCTION`, as `CREATE OR REPLACE` (a later migration re-creating it). */
export const orReplace = (statement: string) =>
  statement.replace(/^CREATE FUNCTION/, 'CREATE OR REPLACE FUNCTION');

export const DERIVED_HISTORY: readonly string[] = [
  `ALTER TABLE sessions ADD COLUMN queued_tick bigint, ADD COLUMN claimed_tick bigint,
    ADD COLUMN ended_tick bigint,
    ADD COLUMN queued_reason text CHECK (length(queued_reason) <= 1000),
    ADD COLUMN cancel_reason text CHECK (length(cancel_reason) <= 1000)`,
  `CREATE INDEX sessions_changed_tick_idx ON sessions ((${CHANGED_TICK}))`,
  // One row per tick that changed anything (a repair's tick has none).
  `CREATE TABLE dispatch_ticks (
    tick bigint PRIMARY KEY CHECK (tick > 0),
    owner text NOT NULL CHECK (length(owner) BETWEEN 1 AND 256),
    at timestamptz NOT NULL
  )`,
  SESSION_HISTORY_VIEW,
  orReplace(RT_PLACE),
  orReplace(RT_TICK),
];
