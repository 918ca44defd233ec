/**
 * The rows `roundtable status` is counted from: sessions by user and status,
 * the cap overrides, and the head of the line. One query set, so the CLI
 * reading the rows and a running node answering for them give the same answer.
 */
import { sql } from 'kysely';
import type { Db } from './transaction.js';
import { getUserCaps } from './userCaps.js';

export interface LineStatusRows {
  counts: Array<{ userId: string; status: string; n: number }>;
  caps: Array<{ userId: string; maxRunning: number }>;
  /** The first `headSize` queued sessions, in dispatch order; `since` is ISO-8601 UTC. */
  head: Array<{ userId: string; taskId: string; title: string; attempt: number; since: string }>;
}

export async function readLineStatus(db: Db, headSize: number): Promise<LineStatusRows> {
  const counts = await db
    .selectFrom('sessions')
    .select(['user_id', 'status', sql<string>`count(*)`.as('n')])
    .groupBy(['user_id', 'status'])
    .execute();
  const caps = await getUserCaps(db);
  // Dispatch order, the same (enqueued_at, id) the pool and the claim use.
  const head = await db
    .selectFrom('sessions')
    .innerJoin('tasks', 'tasks.id', 'sessions.task_id')
    .select([
      'sessions.user_id',
      'sessions.task_id',
      'sessions.attempt',
      'sessions.enqueued_at',
      'tasks.title',
    ])
    .where('sessions.status', '=', 'queued')
    .orderBy('sessions.enqueued_at')
    .orderBy('sessions.id')
    .limit(headSize)
    .execute();
  return {
    counts: counts.map((r) => ({ userId: r.user_id, status: r.status, n: Number(r.n) })),
    caps: [...caps].map(([userId, maxRunning]) => ({ userId, maxRunning })),
    head: head.map((r) => ({
      userId: r.user_id,
      taskId: r.task_id,
      title: r.title,
      attempt: r.attempt,
      since: new Date(r.enqueued_at).toISOString(),
    })),
  };
}
