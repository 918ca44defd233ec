/**
 * The one way a session's status changes: an UPDATE guarded by
 * (id, expected status, expected epoch), and the history row, in the same
 * statement (so in the same transaction, with or without a caller's). The row lock makes a racing second writer wait, then match
 * nothing; it gets a `StaleStatusError`, never a silent no-op.
 */
import { sql, type Updateable } from 'kysely';
import { NotFoundError, StaleStatusError } from './errors.js';
import { type Session, toSession } from './rows.js';
import type { SessionStatus, SessionsTable } from './schema.js';
import type { Db } from './transaction.js';

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

/**
 * Applies one guarded transition and appends its `session_events` row, in
 * one statement (the UPDATE and the INSERT chained as CTEs: the history row
 * is written from the updated row, so it exists exactly when the update
 * matched, with no BEGIN and COMMIT round trips). Input must be validated.
 */
export async function compareAndSet(db: Db, input: CompareAndSetInput): Promise<Session> {
  const { sessionId, expected, now } = input;
  const row = await db
    .with('u', (q) =>
      q
        .updateTable('sessions')
        .set({ ...input.set, status: input.to, updated_at: now })
        .where('id', '=', sessionId)
        .where('status', '=', expected.status)
        .where('epoch', '=', expected.epoch)
        .returningAll(),
    )
    .with('e', (q) =>
      q
        .insertInto('session_events')
        .columns(['session_id', 'from_status', 'to_status', 'reason', 'node', 'epoch', 'at'])
        .expression((eb) =>
          eb
            .selectFrom('u')
            .select([
              'u.id',
              sql<string>`${expected.status}::text`.as('from_status'),
              sql<string>`${input.to}::text`.as('to_status'),
              sql<string | null>`${input.reason}::text`.as('reason'),
              input.node === undefined
                ? 'u.owner_node'
                : sql<string | null>`${input.node}::text`.as('node'),
              'u.epoch',
              'u.updated_at',
            ]),
        ),
    )
    .selectFrom('u')
    .selectAll()
    .executeTakeFirst();
  if (row === undefined) {
    const actual = await db
      .selectFrom('sessions')
      .select(['status', 'epoch'])
      .where('id', '=', sessionId)
      .executeTakeFirst();
    if (actual === undefined) throw new NotFoundError('session', sessionId);
    throw new StaleStatusError(sessionId, expected, actual);
  }
  return toSession(row);
}
