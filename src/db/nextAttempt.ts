/**
 * A task's next attempt: a queued session (attempt + 1) and the history row
 * that says why it exists. Both `requeue` (a recoverable give-up) and
 * `retryTask` (a user's retry) write it the same way, inside the
 * transaction that checked the previous attempt, so the two paths cannot
 * drift apart in what a new attempt holds.
 */
import { newId } from './ids.js';
import { type Session, toSession } from './rows.js';
import type { Db } from './transaction.js';

/** Inserts attempt `previous.attempt + 1` of the previous attempt's task, queued at `now`. */
export async function insertNextAttempt(
  tx: Db,
  previous: Pick<Session, 'taskId' | 'userId' | 'kind' | 'attempt'>,
  now: Date,
  reason: string,
): Promise<Session> {
  const row = await tx
    .insertInto('sessions')
    .values({
      id: newId('session'),
      task_id: previous.taskId,
      user_id: previous.userId,
      kind: previous.kind,
      status: 'queued',
      attempt: previous.attempt + 1,
      enqueued_at: now,
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  await tx
    .insertInto('session_events')
    .values({
      session_id: row.id,
      from_status: null,
      to_status: 'queued',
      reason,
      node: null,
      epoch: 0,
      at: now,
    })
    .execute();
  return toSession(row);
}
