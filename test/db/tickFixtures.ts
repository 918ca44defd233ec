/** Builders and invariant checks shared by the tick suites. */
import { sql } from 'kysely';
import { expect } from 'vitest';
import { newId } from '../../src/db/ids.js';
import { tick } from '../../src/db/tick.js';
import type {
  TickEnqueue,
  TickFinish,
  TickHandle,
  TickInput,
  TickOp,
  TickResult,
} from '../../src/db/tickTypes.js';
import type { Db } from '../../src/db/transaction.js';
import { SPEC } from './fixtures.js';

let refs = 0;
/** A fresh op ref. */
export const ref = (prefix = 'op') => `${prefix}-${++refs}`;

export function enqueueOp(userId: string, title = 'a task'): TickEnqueue {
  return {
    op: 'enqueue',
    ref: ref('e'),
    taskId: newId('task'),
    sessionId: newId('session'),
    userId,
    title,
    spec: SPEC,
  };
}

/** A run's handle, recorded on running@epoch. */
export const handleOp = (sessionId: string, epoch: number): TickHandle => ({
  op: 'handle',
  ref: ref('h'),
  sessionId,
  epoch,
  backend: 'simulated',
  handle: `sim-${sessionId.slice(-6)}`,
  startedAt: new Date('2026-07-14T10:00:00.500Z'),
});

export function finishOp(
  sessionId: string,
  epoch: number,
  over: Partial<TickFinish> = {},
): TickFinish {
  return {
    op: 'finish',
    ref: ref('f'),
    sessionId,
    epoch,
    status: 'succeeded',
    exitCode: 0,
    reason: null,
    userRecoverable: false,
    output: { text: 'done\n', totalBytes: 5, truncated: false },
    column: 'done',
    requeue: null,
    ...over,
  };
}

/** Failed by the infrastructure: requeued at the head of the line. */
export function requeueOp(sessionId: string, epoch: number): TickFinish {
  return finishOp(sessionId, epoch, {
    status: 'failed',
    exitCode: null,
    reason: 'container_replaced',
    userRecoverable: true,
    output: null,
    column: 'queued',
    requeue: { sessionId: newId('session') },
  });
}

/** A tick's head around `ops`, unchecked (for the boundary's own tests). */
export const tickHead = (ops: unknown[]) => ({
  owner: 'n1@b1',
  now: new Date(0),
  globalCap: 2,
  defaultUserCap: 1,
  want: 0,
  ops: ops as never,
});

export interface Ticker {
  (ops: readonly TickOp[], over?: Partial<TickInput>): Promise<TickResult>;
  input(ops: readonly TickOp[], over?: Partial<TickInput>): TickInput;
}

/** Ticks on `db` with a stepping clock and the given defaults. */
export function ticker(db: Db, defaults: Partial<TickInput> = {}): Ticker {
  let t = Date.parse('2026-07-14T10:00:00Z');
  const input = (ops: readonly TickOp[], over: Partial<TickInput> = {}): TickInput => {
    t += 1000;
    return {
      owner: 'node-a@boot1',
      now: new Date(t),
      globalCap: 20,
      defaultUserCap: 2,
      want: 0,
      ops,
      ...defaults,
      ...over,
    };
  };
  const run = ((ops, over) => tick(db, input(ops, over))) as Ticker;
  run.input = input;
  return run;
}

/** The outcome of `ref`, which must be applied. */
export function appliedOf(result: TickResult, r: string) {
  const o = result.outcomes.find((x) => x.ref === r);
  if (o?.kind !== 'applied') throw new Error(`${r}: expected applied, got ${JSON.stringify(o)}`);
  return o;
}

/**
 * The dispatch invariants, recounted from the rows: every line's counts,
 * the global count, contiguous turns under one join number per line, and
 * no row pointing at a missing task or session (the foreign keys migration 5
 * dropped), and a derived history whose ticks were all logged, in order.
 */
export async function expectConsistent(db: Db): Promise<void> {
  const { rows: bad } = await sql<{ user_id: string; problem: string }>`
    WITH q AS (
      SELECT user_id, count(*) AS n, min(turn) AS t0, max(turn) AS t1, count(DISTINCT join_seq) AS dj,
        min(join_seq) AS j, count(turn) AS nt
      FROM sessions WHERE status = 'queued' GROUP BY user_id
    ), r AS (SELECT user_id, count(*) AS n FROM sessions WHERE status = 'running' GROUP BY user_id)
    SELECT l.user_id, 'counts' AS problem FROM user_lines l
      LEFT JOIN q ON q.user_id = l.user_id LEFT JOIN r ON r.user_id = l.user_id
      WHERE l.queued <> coalesce(q.n, 0) OR l.running <> coalesce(r.n, 0)
    UNION ALL
    SELECT q.user_id, 'turns' FROM q LEFT JOIN user_lines l ON l.user_id = q.user_id
      WHERE l.user_id IS NULL OR q.nt <> q.n OR q.t1 - q.t0 + 1 <> q.n OR q.t0 <> l.head_turn
        OR q.dj <> 1 OR q.j <> l.join_seq
    UNION ALL
    SELECT 'global', 'running' FROM dispatch_state
      WHERE running <> (SELECT count(*) FROM sessions WHERE status = 'running')
    UNION ALL
    -- What the foreign keys checked before migration 5: the writers keep it now.
    SELECT s.id, 'session without task' FROM sessions s
      WHERE NOT EXISTS (SELECT 1 FROM tasks t WHERE t.id = s.task_id)
    UNION ALL
    SELECT e.session_id, 'event without session' FROM session_events e
      WHERE NOT EXISTS (SELECT 1 FROM sessions s WHERE s.id = e.session_id)
    UNION ALL
    SELECT o.session_id, 'output without session' FROM session_outputs o
      WHERE NOT EXISTS (SELECT 1 FROM sessions s WHERE s.id = o.session_id)
    UNION ALL
    SELECT DISTINCT c.session_id, 'output piece without output' FROM session_output_chunks c
      WHERE NOT EXISTS (SELECT 1 FROM session_outputs o WHERE o.session_id = c.session_id)
    UNION ALL
    -- The derived history (migration 7): every tick a row names was logged, in transition order.
    SELECT s.id, 'tick not logged' FROM sessions s
      CROSS JOIN LATERAL (VALUES (s.queued_tick), (s.claimed_tick), (s.ended_tick)) v(t)
      WHERE v.t IS NOT NULL AND NOT EXISTS (SELECT 1 FROM dispatch_ticks k WHERE k.tick = v.t)
    UNION ALL
    SELECT s.id, 'ticks out of order' FROM sessions s
      WHERE s.claimed_tick < s.queued_tick OR s.ended_tick <= s.claimed_tick
        OR s.ended_tick < s.queued_tick OR (s.claimed_tick IS NOT NULL AND s.claimed_at IS NULL)`.execute(
    db,
  );
  expect(bad).toEqual([]);
}

/** Every queued session id in the priority order (turn, join_seq), from the rows. */
export async function queueOrder(db: Db): Promise<string[]> {
  const { rows } = await sql<{ id: string }>`
    SELECT id FROM sessions WHERE status = 'queued' ORDER BY turn, join_seq`.execute(db);
  return rows.map((r) => r.id);
}
