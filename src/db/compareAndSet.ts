/**
 * The one way a session's status changes: an UPDATE guarded by
 * (id, expected status, expected epoch), and the history row, in the same
 * transaction. The row lock makes a racing second writer wait, then match
 * nothing; it gets a `StaleStatusError`, never a silent no-op.
 */
import type { Updateable } from 'kysely';
import { NotFoundError, StaleStatusError } from './errors.js';
import { type Session, toSession } from './rows.js';
import type { SessionStatus, SessionsTable } from './schema.js';
import { type Db, inTransaction } from './transaction.js';

export interface CompareAndSetInput {
  sessionId: string;
  expected: { status: SessionStatus; epoch: number };
  to: SessionStatus;
  /** Other columns to change with the status. */
  set?: Omit<Updateable<SessionsTable>, 'id' | 'status' | 'updated_at'>;
  /** Why, for the history; null when the transition speaks for itself. */
  reason: string | null;
  /** The node making the change; omitted: the session's owner after the change. */
  node?: string | null;
  now: Date;
}

/** Applies one guarded transition and appends its `session_events` row. Input must be validated. */
export async function compareAndSet(db: Db, input: CompareAndSetInput): Promise<Session> {
  const { sessionId, expected, now } = input;
  return inTransaction(db, async (tx) => {
    const row = await tx
      .updateTable('sessions')
      .set({ ...input.set, status: input.to, updated_at: now })
      .where('id', '=', sessionId)
      .where('status', '=', expected.status)
      .where('epoch', '=', expected.epoch)
      .returningAll()
      .executeTakeFirst();
    if (row === undefined) {
      const actual = await tx
        .selectFrom('sessions')
        .select(['status', 'epoch'])
        .where('id', '=', sessionId)
        .executeTakeFirst();
      if (actual === undefined) throw new NotFoundError('session', sessionId);
      throw new StaleStatusError(sessionId, expected, actual);
    }
    const session = toSession(row);
    await tx
      .insertInto('session_events')
      .values({
        session_id: sessionId,
        from_status: expected.status,
        to_status: input.to,
        reason: input.reason,
        node: input.node === undefined ? session.owner : input.node,
        epoch: session.epoch,
        at: now,
      })
      .execute();
    return session;
  });
}
