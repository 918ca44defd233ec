/**
 * Reads over sessions and their history. A scan of the queue goes in
 * submission order, (enqueued_at, id): ties on the clock break by id, so
 * every node sees the same order. The order grants take is the ticks'
 * (turn, join number; docs/runner-pool.md), read by dispatchReads.ts and
 * lineStatus.ts. Each hot query here is served by a partial index (see
 * migrations.ts); reads a user triggers take the user id and filter in SQL.
 */
import { sql } from 'kysely';
import { z } from 'zod';
import { NotFoundError } from './errors.js';
import * as f from './inputs.js';
import { parseOrThrow } from './parseOrThrow.js';
import {
  type Session,
  type SessionEvent,
  toSession,
  toSessionEvent,
  toSessionState,
} from './rows.js';
import type { SessionStatus } from './schema.js';
import type { Db } from './transaction.js';

/** A session by id, for internal callers. Throws `NotFoundError`. */
export async function getSession(db: Db, sessionId: string): Promise<Session> {
  const id = parseOrThrow(f.sessionId, sessionId, 'sessionId');
  const row = await db.selectFrom('sessions').selectAll().where('id', '=', id).executeTakeFirst();
  if (row === undefined) throw new NotFoundError('session', id);
  return toSession(row);
}

/**
 * The epoch and status of each of `sessionIds` that has a row: a node's held
 * sessions (a few), read together to find the runs another node fenced or
 * cancelled.
 */
export async function sessionStates(
  db: Db,
  sessionIds: readonly string[],
): Promise<Map<string, { epoch: number; status: SessionStatus }>> {
  const ids = parseOrThrow(z.array(f.sessionId), sessionIds, 'sessionIds');
  if (ids.length === 0) return new Map();
  const rows = await db
    .selectFrom('sessions')
    .select(['id', 'epoch', 'status'])
    .where('id', '=', sql<string>`ANY (${ids}::text[])`)
    .execute();
  return new Map(
    rows.map((row) => {
      const r = toSessionState(row);
      return [r.id, { epoch: r.epoch, status: r.status }];
    }),
  );
}

/** Every session of a task, oldest attempt first. */
export async function listSessionsForTask(db: Db, taskId: string): Promise<Session[]> {
  const id = parseOrThrow(f.taskId, taskId, 'taskId');
  const rows = await db
    .selectFrom('sessions')
    .selectAll()
    .where('task_id', '=', id)
    .orderBy('attempt')
    .execute();
  return rows.map(toSession);
}

const listQueuedOptions = z.strictObject({
  limit: z.number().int().min(1).optional(),
  /** Keyset cursor: only sessions strictly after this one in submission order. */
  after: z.strictObject({ enqueuedAt: f.now, id: f.sessionId }).optional(),
});
export type ListQueuedOptions = z.input<typeof listQueuedOptions>;

/**
 * Queued sessions in submission order, (enqueued_at, id), with a keyset
 * cursor: a scan of the queue (the boot's, a repair's, a benchmark's). Not
 * the order grants take (round robin by turn, docs/runner-pool.md): for
 * that, `readLineStatus`'s head and `positionsOf`.
 */
export async function listQueued(db: Db, options: ListQueuedOptions = {}): Promise<Session[]> {
  const o = parseOrThrow(listQueuedOptions, options, 'options');
  let query = db.selectFrom('sessions').selectAll().where('status', '=', 'queued');
  if (o.after !== undefined) {
    const { enqueuedAt, id } = o.after;
    query = query.where(sql<boolean>`(enqueued_at, id) > (${enqueuedAt}, ${id})`);
  }
  query = query.orderBy('enqueued_at').orderBy('id');
  if (o.limit !== undefined) query = query.limit(o.limit);
  return (await query.execute()).map(toSession);
}

const listRunningOptions = z.strictObject({ owner: f.name.optional(), userId: f.name.optional() });
export type ListRunningOptions = z.input<typeof listRunningOptions>;

/**
 * Running sessions: all, or those of one owner node, or of one user (or both
 * filters), in the order they were granted.
 */
export async function listRunning(db: Db, options: ListRunningOptions = {}): Promise<Session[]> {
  const o = parseOrThrow(listRunningOptions, options, 'options');
  let query = db.selectFrom('sessions').selectAll().where('status', '=', 'running');
  if (o.owner !== undefined) query = query.where('owner_node', '=', o.owner);
  if (o.userId !== undefined) query = query.where('user_id', '=', o.userId);
  // Ties on the clock (one tick's grants share its instant) in grant order,
  // the tick's then its key's (turn, join): never by the random id, so the
  // runs a boot adopts are looked at in the same order every time and a
  // seed replays the same history (docs/testing.md).
  const ordered = query
    .orderBy('claimed_at')
    .orderBy('claimed_tick')
    .orderBy('turn')
    .orderBy('join_seq')
    .orderBy('id');
  return (await ordered.execute()).map(toSession);
}

/** Running counts per user, and in total: what the caps are checked against. */
export async function countRunning(
  db: Db,
): Promise<{ total: number; byUser: Map<string, number> }> {
  const rows = await db
    .selectFrom('sessions')
    .select(['user_id', sql<string>`count(*)`.as('n')])
    .where('status', '=', 'running')
    .groupBy('user_id')
    .execute();
  const byUser = new Map(rows.map((r) => [r.user_id, Number(r.n)]));
  let total = 0;
  for (const n of byUser.values()) total += n;
  return { total, byUser };
}

/**
 * A session's history, oldest first (`session_history`: the event rows and
 * the transitions derived from ticked rows), for internal callers.
 */
export async function listSessionEvents(db: Db, sessionId: string): Promise<SessionEvent[]> {
  const id = parseOrThrow(f.sessionId, sessionId, 'sessionId');
  const rows = await db
    .selectFrom('session_history')
    .selectAll()
    .where('session_id', '=', id)
    .orderBy('epoch')
    .orderBy('step')
    .orderBy('id')
    .execute();
  return rows.map(toSessionEvent);
}

/** A session's history if the session belongs to `userId` (empty otherwise): for the board. */
export async function listSessionEventsForUser(
  db: Db,
  userId: string,
  sessionId: string,
): Promise<SessionEvent[]> {
  const user = parseOrThrow(f.name, userId, 'userId');
  const id = parseOrThrow(f.sessionId, sessionId, 'sessionId');
  const rows = await db
    .selectFrom('session_history')
    .selectAll()
    .where('session_id', '=', id)
    .where('user_id', '=', user)
    .orderBy('epoch')
    .orderBy('step')
    .orderBy('id')
    .execute();
  return rows.map(toSessionEvent);
}
