/**
 * The rows `roundtable status` is counted from: sessions by user and status,
 * the caps the dispatch ticks enforce, and the head of the line. One query
 * set, so the CLI reading the rows and a running node answering for them give
 * the same answer.
 */
import { sql } from 'kysely';
import { type EnforcedCaps, readEnforcedCaps } from './dispatchReads.js';
import type { Db } from './transaction.js';
import { getUserCaps } from './userCaps.js';

export interface LineStatusRows {
  counts: Array<{ userId: string; status: string; n: number }>;
  caps: Array<{ userId: string; maxRunning: number }>;
  /**
   * The caps the last tick applied (`dispatch_state`): what the grants obey,
   * whatever the reader was configured with. Null until a node has ticked
   * (`readEnforcedCaps`); absent in the answer of a node from before this
   * field (a rolling deploy), when `status` falls back to its own settings.
   */
  enforced?: EnforcedCaps | null;
  /**
   * The first `headSize` queued sessions in the order the ticks grant them
   * (docs/runner-pool.md, "Position"): the i-th has position i + 1 on every
   * board. `since` is ISO-8601 UTC.
   */
  head: Array<{ userId: string; taskId: string; title: string; attempt: number; since: string }>;
}

/**
 * The rows in one snapshot (a read-only repeatable-read transaction, or the
 * caller's): the counts, the caps and the head agree as of one tick. As
 * separate statements, a tick committed between two of them split them (the
 * counts saying three waiting, the head listing two).
 */
export async function readLineStatus(db: Db, headSize: number): Promise<LineStatusRows> {
  if (db.isTransaction) return readIn(db, headSize);
  return db
    .transaction()
    .setIsolationLevel('repeatable read')
    .setAccessMode('read only')
    .execute((tx) => readIn(tx, headSize));
}

async function readIn(db: Db, headSize: number): Promise<LineStatusRows> {
  const counts = await db
    .selectFrom('sessions')
    .select(['user_id', 'status', sql<string>`count(*)`.as('n')])
    .groupBy(['user_id', 'status'])
    .execute();
  const caps = await getUserCaps(db);
  const enforced = await readEnforcedCaps(db);
  // The grant order is the key (turn, join number), not the time of enqueue:
  // a newcomer goes ahead of a flood, a re-queued run to the head of its
  // user's line. Each active line gives its first `headSize` (its queued
  // turns in order, on the (user_id, turn) index), so the read is
  // O(active users × headSize), whatever the depth. A session written
  // outside a tick and not yet repaired has no turn, hence no place yet (as
  // `positionsOf` says).
  const { rows: head } = await sql<{
    user_id: string;
    task_id: string;
    attempt: number;
    enqueued_at: Date | string;
    title: string;
  }>`
    SELECT h.user_id, h.task_id, h.attempt, h.enqueued_at, t.title
    FROM user_lines l
    CROSS JOIN LATERAL (
      SELECT s.id, s.user_id, s.task_id, s.attempt, s.enqueued_at, s.turn, s.join_seq
      FROM sessions s
      WHERE s.user_id = l.user_id AND s.status = 'queued' AND s.turn IS NOT NULL
      ORDER BY s.turn LIMIT ${headSize}) h
    JOIN tasks t ON t.id = h.task_id
    WHERE l.queued > 0
    ORDER BY h.turn, h.join_seq, h.id
    LIMIT ${headSize}`.execute(db);
  return {
    counts: counts.map((r) => ({ userId: r.user_id, status: r.status, n: Number(r.n) })),
    caps: [...caps].map(([userId, maxRunning]) => ({ userId, maxRunning })),
    enforced,
    head: head.map((r) => ({
      userId: r.user_id,
      taskId: r.task_id,
      title: r.title,
      attempt: r.attempt,
      since: new Date(r.enqueued_at).toISOString(),
    })),
  };
}
