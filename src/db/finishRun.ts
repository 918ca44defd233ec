/**
 * The end of a run as one statement: the finish's compare-and-set on the
 * session, its history row, the run's output row and the card's column, all
 * chained as CTEs from the updated row. One statement is one commit with no
 * BEGIN and COMMIT round trips, and it is all or nothing as a transaction
 * is: a stale epoch matches no row, so none of the four writes happens.
 */
import { sql } from 'kysely';
import { z } from 'zod';
import { CorruptRowError, NotFoundError, StaleStatusError } from './errors.js';
import * as f from './inputs.js';
import { parseOrThrow } from './parseOrThrow.js';
import { type Session, type Task, toSession, toTask } from './rows.js';
import { fitOutput, type RunOutputInput, writtenBytes } from './sessionOutputs.js';
import { type FinishInput, finishInput } from './sessionTransitions.js';
import { storedTail } from './storedTail.js';
import type { Db } from './transaction.js';

const outputInput = z.strictObject({
  text: z.string(),
  totalBytes: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
  truncated: z.boolean(),
});

/**
 * running -> succeeded | failed (as `finish`), with the output stored (as
 * `finishWithOutput`) and the task moved to `column`, in one statement.
 * Returns both new rows. Throws `StaleStatusError` when the row moved on
 * (nothing is written), `NotFoundError` for an unknown session.
 */
export async function finishRun(
  db: Db,
  input: FinishInput,
  output: RunOutputInput,
  column: string,
): Promise<{ session: Session; task: Task }> {
  const i = parseOrThrow(finishInput, input, '');
  const col = parseOrThrow(f.column, column, 'column');
  const o = parseOrThrow(outputInput, output, 'output');
  const fitted = fitOutput(o);
  const tail = storedTail(fitted.text);
  const failed = i.status === 'failed';
  const totalBytes = writtenBytes(o);
  const result = await sql<Record<string, unknown>>`
    WITH u AS (
      UPDATE sessions SET
        finished_at = ${i.now}::timestamptz,
        exit_code = ${i.exitCode}::integer,
        failure_reason = ${failed ? i.reason : null}::text,
        user_recoverable = ${failed ? i.userRecoverable : false}::boolean,
        status = ${i.status}::text,
        updated_at = ${i.now}::timestamptz
      WHERE id = ${i.sessionId} AND status = 'running' AND epoch = ${i.epoch}::integer
      RETURNING *
    ), e AS (
      INSERT INTO session_events (session_id, from_status, to_status, reason, node, epoch, at)
      SELECT u.id, 'running', u.status, ${failed ? i.reason : null}::text,
             u.owner_node, u.epoch, u.updated_at
      FROM u
    ), o AS (
      INSERT INTO session_outputs (session_id, text, total_bytes, truncated, created_at, tail, tail_whole)
      SELECT u.id, ${fitted.text}::text, ${totalBytes}::bigint, ${fitted.truncated}::boolean,
             u.finished_at, ${tail.tail}::text, ${tail.tail_whole}::boolean
      FROM u
    ), t AS (
      UPDATE tasks SET board_column = ${col}::text, updated_at = ${i.now}::timestamptz
      FROM u
      WHERE tasks.id = u.task_id AND tasks.user_id = u.user_id
      RETURNING tasks.id AS t_id, tasks.user_id AS t_user_id, tasks.title AS t_title,
                tasks.run_spec AS t_run_spec, tasks.board_column AS t_board_column,
                tasks.created_at AS t_created_at, tasks.updated_at AS t_updated_at,
                tasks.time_limit_ms AS t_time_limit_ms
    )
    SELECT u.*, t.* FROM u LEFT JOIN t ON true`.execute(db);
  const row = result.rows[0];
  if (row === undefined) {
    const actual = await db
      .selectFrom('sessions')
      .select(['status', 'epoch'])
      .where('id', '=', i.sessionId)
      .executeTakeFirst();
    if (actual === undefined) throw new NotFoundError('session', i.sessionId);
    throw new StaleStatusError(i.sessionId, { status: 'running', epoch: i.epoch }, actual);
  }
  const session = toSession(row);
  // A session's task exists (foreign key) and has its user: a miss is a broken row.
  if (row.t_id === null || row.t_id === undefined) {
    throw new CorruptRowError('sessions', session.id, 'task_id');
  }
  const task = toTask({
    id: row.t_id,
    user_id: row.t_user_id,
    title: row.t_title,
    run_spec: row.t_run_spec,
    board_column: row.t_board_column,
    created_at: row.t_created_at,
    updated_at: row.t_updated_at,
    time_limit_ms: row.t_time_limit_ms,
  });
  return { session, task };
}
