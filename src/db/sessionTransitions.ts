/**
 * Every status change a session can make, each a compare-and-set on
 * (id, expected status, epoch) with its history row in one transaction:
 *
 *   queued  -> running            claim      (epoch + 1, owner, claimed_at)
 *   running -> running            adopt      (epoch + 1, new owner)
 *   running -> succeeded | failed finish
 *   queued | running -> cancelled cancel
 *   failed (recoverable)          requeue    -> a new queued session, attempt + 1
 *
 * `recordHandle` is not a status change but is fenced the same way, so a
 * deposed owner cannot overwrite its successor's handle. Every input is
 * validated before any SQL runs; timestamps come from the caller's clock.
 */
import { sql } from 'kysely';
import { z } from 'zod';
import { compareAndSet } from './compareAndSet.js';
import { NotFoundError, StaleStatusError, ValidationError } from './errors.js';
import * as f from './inputs.js';
import { insertNextAttempt } from './nextAttempt.js';
import { parseOrThrow } from './parseOrThrow.js';
import { type Session, toSession } from './rows.js';
import { type Db, inTransaction } from './transaction.js';

const claimInput = z.strictObject({
  sessionId: f.sessionId,
  epoch: f.epoch,
  owner: f.name,
  now: f.now,
});
export type ClaimInput = z.input<typeof claimInput>;

/** queued -> running: `owner` takes the session; the epoch moves on, fencing any earlier holder. */
export async function claim(db: Db, input: ClaimInput): Promise<Session> {
  const i = parseOrThrow(claimInput, input, '');
  return compareAndSet(db, {
    sessionId: i.sessionId,
    expected: { status: 'queued', epoch: i.epoch },
    to: 'running',
    set: { owner_node: i.owner, epoch: i.epoch + 1, claimed_at: i.now },
    reason: 'claimed',
    node: i.owner,
    now: i.now,
  });
}

const adoptInput = claimInput.extend({ reason: f.reason.optional() });
export type AdoptInput = z.input<typeof adoptInput>;

/** running -> running under a new owner (the Reconciler adopting an orphan); the old owner is fenced out. */
export async function adopt(db: Db, input: AdoptInput): Promise<Session> {
  const i = parseOrThrow(adoptInput, input, '');
  return compareAndSet(db, {
    sessionId: i.sessionId,
    expected: { status: 'running', epoch: i.epoch },
    to: 'running',
    set: { owner_node: i.owner, epoch: i.epoch + 1 },
    reason: i.reason ?? 'adopted',
    node: i.owner,
    now: i.now,
  });
}

const recordHandleInput = z.strictObject({
  sessionId: f.sessionId,
  epoch: f.epoch,
  backend: f.backend,
  handle: f.handle,
  /** When the exec started, once it has; the adopt policy compares it with the container's start. */
  startedAt: f.now.optional(),
  now: f.now,
});
export type RecordHandleInput = z.input<typeof recordHandleInput>;

/**
 * Records where a running session lives (and, once known, when its exec
 * started). Fenced on (running, epoch). Exec start is set here rather than
 * at claim: a container created after the claim would otherwise look
 * "started after the exec" and be judged replaced by the adopt policy.
 */
export async function recordHandle(db: Db, input: RecordHandleInput): Promise<Session> {
  const i = parseOrThrow(recordHandleInput, input, '');
  const row = await db
    .updateTable('sessions')
    .set({
      backend: i.backend,
      handle: i.handle,
      ...(i.startedAt === undefined ? {} : { started_at: i.startedAt }),
      updated_at: i.now,
    })
    .where('id', '=', i.sessionId)
    .where('status', '=', 'running')
    .where('epoch', '=', i.epoch)
    .returningAll()
    .executeTakeFirst();
  if (row !== undefined) return toSession(row);
  const actual = await db
    .selectFrom('sessions')
    .select(['status', 'epoch'])
    .where('id', '=', i.sessionId)
    .executeTakeFirst();
  if (actual === undefined) throw new NotFoundError('session', i.sessionId);
  throw new StaleStatusError(i.sessionId, { status: 'running', epoch: i.epoch }, actual);
}

/** `finish`'s input; `finishRun` takes the same. */
export const finishInput = z.discriminatedUnion('status', [
  z.strictObject({
    sessionId: f.sessionId,
    epoch: f.epoch,
    status: z.literal('succeeded'),
    exitCode: f.exitCode,
    now: f.now,
  }),
  z.strictObject({
    sessionId: f.sessionId,
    epoch: f.epoch,
    status: z.literal('failed'),
    /** Null when the run ended without one (replaced container, timeout). */
    exitCode: f.exitCode.nullable(),
    reason: f.reason,
    userRecoverable: z.boolean(),
    now: f.now,
  }),
]);
export type FinishInput = z.input<typeof finishInput>;

/** running -> succeeded | failed, with exit code, and for a failure its reason and recoverability. */
export async function finish(db: Db, input: FinishInput): Promise<Session> {
  const i = parseOrThrow(finishInput, input, '');
  const failed = i.status === 'failed';
  return compareAndSet(db, {
    sessionId: i.sessionId,
    expected: { status: 'running', epoch: i.epoch },
    to: i.status,
    set: {
      finished_at: i.now,
      exit_code: i.exitCode,
      failure_reason: failed ? i.reason : null,
      user_recoverable: failed ? i.userRecoverable : false,
    },
    reason: failed ? i.reason : null,
    now: i.now,
  });
}

const cancelInput = z.strictObject({
  sessionId: f.sessionId,
  expected: z.strictObject({ status: z.enum(['queued', 'running']), epoch: f.epoch }),
  reason: f.reason,
  node: f.name.optional(),
  now: f.now,
});
export type CancelInput = z.input<typeof cancelInput>;

/** queued | running -> cancelled. Stopping a running container is the caller's job. */
export async function cancel(db: Db, input: CancelInput): Promise<Session> {
  const i = parseOrThrow(cancelInput, input, '');
  return compareAndSet(db, {
    sessionId: i.sessionId,
    expected: i.expected,
    to: 'cancelled',
    set: { finished_at: i.now },
    reason: i.reason,
    node: i.node ?? null,
    now: i.now,
  });
}

const requeueInput = z.strictObject({ sessionId: f.sessionId, epoch: f.epoch, now: f.now });
export type RequeueInput = z.input<typeof requeueInput>;

/**
 * A user-recoverable failure becomes a new queued session (attempt + 1) for
 * the same task, at the back of the queue. The failed session keeps its
 * history. Its row is locked first, so of two racing requeues the second
 * sees the new attempt and gets a `StaleStatusError`.
 */
export async function requeue(db: Db, input: RequeueInput): Promise<Session> {
  const i = parseOrThrow(requeueInput, input, '');
  return inTransaction(db, async (tx) => {
    const failed = await tx
      .selectFrom('sessions')
      .selectAll()
      .where('id', '=', i.sessionId)
      .forUpdate()
      .executeTakeFirst();
    if (failed === undefined) throw new NotFoundError('session', i.sessionId);
    const s = toSession(failed);
    if (s.status !== 'failed' || s.epoch !== i.epoch) {
      throw new StaleStatusError(
        s.id,
        { status: 'failed', epoch: i.epoch },
        { status: s.status, epoch: s.epoch },
      );
    }
    if (!s.userRecoverable)
      throw new ValidationError('sessionId', 'failure is not user-recoverable');
    const later = await tx
      .selectFrom('sessions')
      .select(sql<number>`max(attempt)`.as('attempt'))
      .where('task_id', '=', s.taskId)
      .executeTakeFirst();
    if ((later?.attempt ?? 0) > s.attempt) {
      throw new StaleStatusError(
        s.id,
        { status: 'failed', epoch: i.epoch },
        {
          status: `failed, already requeued as attempt ${later?.attempt}`,
          epoch: s.epoch,
        },
      );
    }
    return insertNextAttempt(tx, s, i.now, `requeued after ${s.id}`);
  });
}
