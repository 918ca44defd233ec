/**
 * Retention: a task whose every attempt ended before a cutoff is deleted
 * whole (its sessions, their history and stored output, the task), a batch
 * at a time. Without it the store, every node's board and every boot grew
 * with every job ever run (migration 21; docs/data.md, "Retention").
 *
 * A batch is one transaction under the tick's lock: a tick's `retry`
 * queues a new attempt of a finished task, and it must find the task
 * either whole or gone, never half deleted. The lock is held for the
 * batch only (the Reconciler's batch of 100 takes ~5-15 ms on a server), so ticks wait for
 * one batch at most. The history's append-only trigger lets this
 * transaction, and only it, delete events (`roundtable.prune`).
 */
import { sql } from 'kysely';
import { z } from 'zod';
import { ADVISORY_LOCKS, LOCK_NAMESPACE } from './advisoryLocks.js';
import * as f from './inputs.js';
import { parseOrThrow } from './parseOrThrow.js';
import { type Db, inTransaction } from './transaction.js';

/** Most tasks one batch deletes. */
export const MAX_PRUNE_BATCH = 10_000;
/** The batch the Reconciler asks for: ~5-15 ms of the tick's lock on a server (~75 µs a task). */
export const PRUNE_BATCH = 100;

const pruneInput = z.strictObject({
  /** Tasks whose every attempt ended before this instant go. */
  before: f.now,
  limit: z.number().int().min(1).max(MAX_PRUNE_BATCH),
});
export type PruneFinishedInput = z.input<typeof pruneInput>;

/**
 * Deletes up to `limit` tasks created before `before` none of whose
 * attempts is queued or running or ended at or after `before` (oldest
 * first); returns their ids. Fewer than `limit` means none is left.
 */
export async function pruneFinished(db: Db, input: PruneFinishedInput): Promise<string[]> {
  const i = parseOrThrow(pruneInput, input, '');
  return inTransaction(db, async (tx) => {
    await sql`SELECT pg_advisory_xact_lock(${LOCK_NAMESPACE}, ${ADVISORY_LOCKS.claimSlot})`.execute(
      tx,
    );
    // A final session without finished_at (rows of an older version) ends by its last update.
    const live = (task: ReturnType<typeof sql>) => sql`EXISTS (
      SELECT 1 FROM sessions s
      WHERE s.task_id = ${task}
        AND (s.status IN ('queued', 'running') OR coalesce(s.finished_at, s.updated_at) >= ${i.before}))`;
    const found = await sql<{ id: string }>`
      SELECT t.id FROM tasks t
      WHERE t.created_at < ${i.before} AND NOT ${live(sql.ref('t.id'))}
      ORDER BY t.created_at
      LIMIT ${i.limit}
      FOR UPDATE OF t`.execute(tx);
    if (found.rows.length === 0) return [];
    // Checked again in a statement of its own, with the rows locked: under
    // READ COMMITTED it sees a new attempt whose writer held the task while
    // the first statement waited (that statement's subquery would not), and
    // with the tasks and their sessions locked no new one can come.
    const locked = found.rows.map((r) => r.id);
    await sql`SELECT 1 FROM sessions WHERE task_id = ANY(${locked}::text[]) FOR UPDATE`.execute(tx);
    const kept = await sql<{ id: string }>`
      SELECT t.id FROM unnest(${locked}::text[]) AS t(id) WHERE NOT ${live(sql.ref('t.id'))}`.execute(
      tx,
    );
    const ids = kept.rows.map((r) => r.id);
    if (ids.length === 0) return ids;
    await sql`SELECT set_config('roundtable.prune', 'on', true)`.execute(tx);
    const sessions = sql`SELECT id FROM sessions WHERE task_id = ANY(${ids}::text[])`;
    await sql`DELETE FROM session_events WHERE session_id IN (${sessions})`.execute(tx);
    await sql`DELETE FROM session_outputs WHERE session_id IN (${sessions})`.execute(tx);
    await sql`DELETE FROM live_tails WHERE session_id IN (${sessions})`.execute(tx);
    await sql`DELETE FROM sessions WHERE task_id = ANY(${ids}::text[])`.execute(tx);
    await sql`DELETE FROM tasks WHERE id = ANY(${ids}::text[])`.execute(tx);
    await sql`SELECT set_config('roundtable.prune', 'off', true)`.execute(tx);
    return ids;
  });
}
