/**
 * Many adoptions in one statement: running -> running under a new owner for
 * every (session, expected epoch) given, each the same compare-and-set as
 * `adopt` (id, status `running`, epoch), each with its history row. A boot
 * that finds a dead node's two hundred runs fences them in one round trip
 * instead of two hundred (one lock each, as one UPDATE takes them).
 *
 * The rows are locked in id order first (`FOR UPDATE` under `ORDER BY`),
 * so two boots fencing overlapping sets wait for each other, never deadlock;
 * the second then finds the epoch moved and matches nothing.
 *
 * A session whose row moved on (another owner adopted it, it finished or
 * was cancelled) is simply not matched: it comes back in `stale`, never
 * half-adopted, and never an error, since a batch must not fail for one row.
 */
import { sql } from 'kysely';
import { z } from 'zod';
import * as f from './inputs.js';
import { parseOrThrow } from './parseOrThrow.js';
import { type Session, toSession } from './rows.js';
import { limitOfRow } from './timeLimit.js';
import type { Db } from './transaction.js';

/** Most sessions one statement fences (its arrays stay a few kilobytes). */
export const MAX_ADOPT_BATCH = 1_000;

const adoptManyInput = z.strictObject({
  sessions: z
    .array(
      z.strictObject({
        sessionId: f.sessionId,
        epoch: f.epoch,
        /**
         * The run found by name for a row that has no handle (its owner died
         * before writing it): recorded with the fence, so the adopter has a
         * run to follow. A row that has a handle keeps its own.
         */
        found: z
          .strictObject({ backend: f.backend, handle: f.handle, startedAt: f.now.nullable() })
          .optional(),
      }),
    )
    .max(MAX_ADOPT_BATCH)
    .refine((xs) => new Set(xs.map((x) => x.sessionId)).size === xs.length, 'a session twice'),
  owner: f.name,
  now: f.now,
  reason: f.reason.optional(),
});
export type AdoptManyInput = z.input<typeof adoptManyInput>;

export interface AdoptManyResult {
  /** The fenced rows (epoch + 1, the new owner), in no particular order. */
  adopted: Session[];
  /** Sessions whose row was no longer (running, expected epoch). */
  stale: string[];
  /** The time limits of the adopted runs' tasks that have one (migration 24), by session id. */
  limits: Map<string, number>;
}

/**
 * Adopts every session of `input.sessions` that is still running at its
 * expected epoch, in one statement (UPDATE and history INSERT as CTEs, as
 * `compareAndSet`); the rest are `stale`. Input is validated before any SQL.
 */
export async function adoptMany(db: Db, input: AdoptManyInput): Promise<AdoptManyResult> {
  const i = parseOrThrow(adoptManyInput, input, '');
  if (i.sessions.length === 0) return { adopted: [], stale: [], limits: new Map() };
  const ids = i.sessions.map((s) => s.sessionId);
  const epochs = i.sessions.map((s) => s.epoch);
  const backends = i.sessions.map((s) => s.found?.backend ?? null);
  const handles = i.sessions.map((s) => s.found?.handle ?? null);
  const startedAts = i.sessions.map((s) => s.found?.startedAt?.toISOString() ?? null);
  const reason = i.reason ?? 'adopted';
  const rows = await sql<unknown>`
    WITH want AS (
      SELECT * FROM unnest(${ids}::text[], ${epochs}::int[], ${backends}::text[],
                           ${handles}::text[], ${startedAts}::timestamptz[])
                    AS w(id, epoch, backend, handle, started_at)
    ), locked AS (
      SELECT s.id FROM sessions s JOIN want ON want.id = s.id
       WHERE s.status = 'running' AND s.epoch = want.epoch
       ORDER BY s.id
         FOR UPDATE OF s
    ), u AS (
      UPDATE sessions s
         SET owner_node = ${i.owner}, epoch = s.epoch + 1, updated_at = ${i.now},
             backend = CASE WHEN s.handle IS NULL AND want.handle IS NOT NULL
                            THEN want.backend ELSE s.backend END,
             handle = COALESCE(s.handle, want.handle),
             started_at = CASE WHEN s.handle IS NULL AND want.handle IS NOT NULL
                               THEN want.started_at ELSE s.started_at END
        FROM locked JOIN want ON want.id = locked.id
       WHERE s.id = locked.id AND s.status = 'running' AND s.epoch = want.epoch
      RETURNING s.*
    ), e AS (
      INSERT INTO session_events (session_id, from_status, to_status, reason, node, epoch, at)
      SELECT u.id, 'running', 'running', ${reason}::text, ${i.owner}::text, u.epoch, u.updated_at
        FROM u
    )
    -- Each run's time limit rides along: its adopter keeps counting it, with no read of its own.
    SELECT u.*, (SELECT t.time_limit_ms FROM tasks t WHERE t.id = u.task_id) AS time_limit_ms
      FROM u`.execute(db);
  const adopted = rows.rows.map(toSession);
  const limits = new Map<string, number>();
  for (const r of rows.rows as { id: string; time_limit_ms: number | null }[])
    if (r.time_limit_ms !== null) limits.set(r.id, limitOfRow(r.id, r.time_limit_ms));
  const fenced = new Set(adopted.map((s) => s.id));
  return { adopted, stale: ids.filter((id) => !fenced.has(id)), limits };
}
