/**
 * The one recovery write: fail a running session as user-recoverable and
 * queue its task again as a new attempt, in one transaction, so no reader
 * ever sees the task with neither a live attempt nor a reason. Used by the
 * TaskRunner (a give-up) and the Reconciler (a re-pinned or orphaned run).
 */
import {
  type Db,
  finish,
  inTransaction,
  newId,
  requeue,
  type Session,
  StaleStatusError,
} from '../db/index.js';
import { toSession } from '../db/rows.js';

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

/**
 * A new queued attempt for a task whose latest session is finished (failed
 * or cancelled): what "retry" means on the board. `requeue` in src/db only
 * covers recoverable failures, so this adapter covers the rest; the latest
 * row is locked first, so two racing retries cannot both add an attempt.
 */
export async function newAttempt(db: Db, taskId: string, now: Date): Promise<Session> {
  return inTransaction(db, async (tx) => {
    const latest = await tx
      .selectFrom('sessions')
      .selectAll()
      .where('task_id', '=', taskId)
      .orderBy('attempt', 'desc')
      .limit(1)
      .forUpdate()
      .executeTakeFirst();
    if (latest === undefined) throw new Error(`task ${taskId} has no session`);
    const last = toSession(latest);
    if (last.status !== 'failed' && last.status !== 'cancelled') {
      throw new StaleStatusError(last.id, { status: 'failed|cancelled', epoch: last.epoch }, last);
    }
    const row = await tx
      .insertInto('sessions')
      .values({
        id: newId('session'),
        task_id: last.taskId,
        user_id: last.userId,
        kind: last.kind,
        status: 'queued',
        attempt: last.attempt + 1,
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
        reason: `retry of ${last.id}`,
        node: null,
        epoch: 0,
        at: now,
      })
      .execute();
    return toSession(row);
  });
}
