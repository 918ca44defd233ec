/**
 * "Retry" on the board: a new queued attempt for a task whose latest
 * session is finished as failed (recoverable or not) or cancelled. `requeue`
 * covers only the recoverable failure a give-up produces; this covers what a
 * user asks for. It is a compare-and-set on the latest attempt as the caller
 * saw it (id, status, epoch): the task is locked, its latest attempt checked, and the new
 * attempt and its history row are written in the same transaction, so of
 * two racing retries exactly one adds an attempt and the other gets a
 * `StaleStatusError`.
 */
import { z } from 'zod';
import { NotFoundError, StaleStatusError } from './errors.js';
import * as f from './inputs.js';
import { insertNextAttempt } from './nextAttempt.js';
import { parseOrThrow } from './parseOrThrow.js';
import { type Session, toSession } from './rows.js';
import { type Db, inTransaction } from './transaction.js';

const retryInput = z.strictObject({
  taskId: f.taskId,
  /** The latest attempt as the caller read it. */
  expected: z.strictObject({
    sessionId: f.sessionId,
    status: z.enum(['failed', 'cancelled']),
    epoch: f.epoch,
  }),
  now: f.now,
});
export type RetryTaskInput = z.input<typeof retryInput>;

/** Queues attempt + 1 of `taskId` if its latest attempt is still `expected`. */
export async function retryTask(db: Db, input: RetryTaskInput): Promise<Session> {
  const i = parseOrThrow(retryInput, input, '');
  return inTransaction(db, async (tx) => {
    // Lock the task first, then read its latest attempt in a new statement:
    // under READ COMMITTED that statement sees an attempt a racing retry
    // committed while we waited, so the loser gets a StaleStatusError, not
    // a unique violation on (task_id, attempt).
    const task = await tx
      .selectFrom('tasks')
      .select('id')
      .where('id', '=', i.taskId)
      .forUpdate()
      .executeTakeFirst();
    if (task === undefined) throw new NotFoundError('task', i.taskId);
    const latest = await tx
      .selectFrom('sessions')
      .selectAll()
      .where('task_id', '=', i.taskId)
      .orderBy('attempt', 'desc')
      .limit(1)
      .forUpdate()
      .executeTakeFirst();
    if (latest === undefined) throw new NotFoundError('task', i.taskId);
    const last = toSession(latest);
    if (
      last.id !== i.expected.sessionId ||
      last.status !== i.expected.status ||
      last.epoch !== i.expected.epoch
    ) {
      throw new StaleStatusError(
        i.expected.sessionId,
        { status: i.expected.status, epoch: i.expected.epoch },
        {
          status: last.id === i.expected.sessionId ? last.status : `superseded by ${last.id}`,
          epoch: last.epoch,
        },
      );
    }
    return insertNextAttempt(tx, last, i.now, `retry of ${last.id}`);
  });
}
