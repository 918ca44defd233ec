/**
 * Migration 5's statements: the tick's hot path made cheaper, same
 * guarantees (docs/data.md, "What a job costs"). Measured with a CPU profile
 * of the server backend running steady ticks (perf, 20 jobs a tick): the
 * foreign-key triggers were ~8% of the tick (one SPI query per history row,
 * three per job, and one per new session), building the reply as jsonb ~5%
 * more than as json.
 *
 * - The foreign keys on the hot tables go. Their invariant is kept by every
 *   writer instead: each history row and output is written in the statement
 *   that wrote its session (from its RETURNING), each session in the
 *   statement or transaction that wrote or read its task, and nothing ever
 *   deletes a task or a session. test/db/tickFixtures.ts checks it after
 *   every model step.
 * - `rt_tick` returns `json` (the reply is only ever sent to the node, never
 *   queried), so it is re-created: a return type cannot be replaced.
 */
import { RT_TICK } from './rtTick.js';

export const LEAN_HOT_PATH: readonly string[] = [
  'ALTER TABLE session_events DROP CONSTRAINT IF EXISTS session_events_session_id_fkey',
  'ALTER TABLE session_outputs DROP CONSTRAINT IF EXISTS session_outputs_session_id_fkey',
  'ALTER TABLE sessions DROP CONSTRAINT IF EXISTS sessions_task_id_fkey',
  'DROP FUNCTION rt_tick(jsonb)',
  RT_TICK,
];
