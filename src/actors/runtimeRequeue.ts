/**
 * The one recovery write: fail a running session as user-recoverable and
 * queue its task again as a new attempt, in one transaction, so no reader
 * ever sees the task with neither a live attempt nor a reason. Used by the
 * TaskRunner (a give-up) and the Reconciler (a re-pinned or orphaned run).
 * Board retries of finished tasks are `retryTask` in src/db.
 */
import { type Db, finish, inTransaction, requeue, type Session } from '../db/index.js';

/**
 * Fails `session` (running at `session.epoch`) with `reason`, then queues
 * attempt + 1. Throws `StaleStatusError` when the row moved on first.
 */
export async function failAndRequeue(
  db: Db,
  session: Pick<Session, 'id' | 'epoch'>,
  reason: string,
  now: Date,
): Promise<Session> {
  return inTransaction(db, async (tx) => {
    await finish(tx, {
      sessionId: session.id,
      epoch: session.epoch,
      status: 'failed',
      exitCode: null,
      reason,
      userRecoverable: true,
      now,
    });
    return requeue(tx, { sessionId: session.id, epoch: session.epoch, now });
  });
}
