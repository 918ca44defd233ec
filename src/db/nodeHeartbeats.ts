/**
 * Heartbeat rows: each boot of each node (`owner` = `${nodeId}@${bootId}`)
 * writes `beat_at` every heartbeat period, so the Reconciler of another node
 * can tell an owner that is merely busy from one that died. The rows are
 * evidence for a liveness decision made by the caller (src/actors); the
 * repository only reads and writes them, with `now` from the caller's clock.
 */
import { sql } from 'kysely';
import { z } from 'zod';
import { ADVISORY_LOCKS, LOCK_NAMESPACE } from './advisoryLocks.js';
import * as f from './inputs.js';
import { parseOrThrow } from './parseOrThrow.js';
import type { Db } from './transaction.js';

/** The longest a beat may vouch for its boot (a day; the column's CHECK, migration 19). */
export const MAX_STALE_AFTER_MS = 86_400_000;

const owner = f.bootOwner;

const beatInput = z.strictObject({
  owner,
  nodeId: f.name,
  now: f.now,
  /** This boot holds its boot lock now (false: lock liveness off, or the lock is lost). */
  bootLock: z.boolean().default(false),
  /** How long this beat vouches for the boot (its period times its stale beats); absent: readers judge by their own. */
  staleAfterMs: z.number().int().min(1).max(MAX_STALE_AFTER_MS).optional(),
});
export type BeatInput = z.input<typeof beatInput>;

/**
 * Writes this boot's beat (the first one records `started_at`), whether it
 * holds its boot lock, and how long the beat vouches for it.
 */
export async function beat(db: Db, input: BeatInput): Promise<void> {
  const i = parseOrThrow(beatInput, input, '');
  const staleAfter = i.staleAfterMs ?? null;
  await db
    .insertInto('node_heartbeats')
    .values({
      owner: i.owner,
      node_id: i.nodeId,
      started_at: i.now,
      beat_at: i.now,
      boot_lock: i.bootLock,
      stale_after_ms: staleAfter,
    })
    .onConflict((oc) =>
      oc
        .column('owner')
        .doUpdateSet({ beat_at: i.now, boot_lock: i.bootLock, stale_after_ms: staleAfter }),
    )
    .execute();
}

/**
 * A row's promise as its readers may trust it: a whole number of ms within
 * the column's bounds, else null (judged by the reader's own window).
 *
 * @example
 * ```ts
 * staleAfterOf(10000) // => 10000
 * staleAfterOf(null) // => null
 * staleAfterOf(0) // => null
 * staleAfterOf(86400001) // => null
 * staleAfterOf(1.5) // => null
 * ```
 */
export function staleAfterOf(v: number | null): number | null {
  return v !== null && Number.isInteger(v) && v >= 1 && v <= MAX_STALE_AFTER_MS ? v : null;
}

/** What the rows say of one owner. */
export interface OwnerBeat {
  /** The owner's last beat, or null when it never beat (or was pruned). */
  beatAt: Date | null;
  /** True when the same node has booted again since this owner started. */
  replaced: boolean;
  /** How long the owner's beat vouches for it, as it wrote; null: judge by your own window. */
  staleAfterMs: number | null;
}

/**
 * Every boot's row with `replaced`: whether a later boot of the same node
 * has beaten since it started (the one query the readers below, and the
 * liveness watch's reading in src/db/livenessReading.ts, narrow).
 */
export function beatsQuery(db: Db) {
  return db
    .selectFrom('node_heartbeats as h')
    .select([
      'h.owner',
      'h.node_id',
      'h.started_at',
      'h.beat_at',
      'h.boot_lock',
      'h.stale_after_ms',
      (eb) =>
        eb
          .exists(
            eb
              .selectFrom('node_heartbeats as later')
              .select('later.owner')
              .whereRef('later.node_id', '=', 'h.node_id')
              .whereRef('later.started_at', '>', 'h.started_at'),
          )
          .as('replaced'),
    ]);
}

/** The last beat of `owner`, and whether a later boot of its node has beaten since. */
export async function ownerBeat(db: Db, input: { owner: string }): Promise<OwnerBeat> {
  const o = parseOrThrow(owner, input.owner, 'owner');
  const row = await beatsQuery(db).where('h.owner', '=', o).executeTakeFirst();
  if (row === undefined) return { beatAt: null, replaced: false, staleAfterMs: null };
  return {
    beatAt: row.beat_at,
    replaced: row.replaced === true,
    staleAfterMs: staleAfterOf(row.stale_after_ms),
  };
}

/** One boot's row, as the cluster's liveness watch reads it. */
export interface NodeBeat {
  owner: string;
  nodeId: string;
  startedAt: Date;
  beatAt: Date;
  /** A later boot of the same node has beaten since this one started. */
  replaced: boolean;
  /** It held its boot lock at its last beat: a lock not held now means it is gone. */
  bootLock: boolean;
  /** How long its beat vouches for it, as it wrote; null: judge by your own window. */
  staleAfterMs: number | null;
}

/** A row of `beatsQuery`, as its readers get it. */
export type BeatRow = Awaited<ReturnType<ReturnType<typeof beatsQuery>['executeTakeFirstOrThrow']>>;

/** A row of `beatsQuery` as a `NodeBeat`. */
export function toNodeBeat(r: BeatRow): NodeBeat {
  return {
    owner: r.owner,
    nodeId: r.node_id,
    startedAt: r.started_at,
    beatAt: r.beat_at,
    replaced: r.replaced === true,
    bootLock: r.boot_lock,
    staleAfterMs: staleAfterOf(r.stale_after_ms),
  };
}

/** Every boot's row (few: one per boot not yet pruned), oldest start first. */
export async function listBeats(db: Db): Promise<NodeBeat[]> {
  const rows = await beatsQuery(db).orderBy('h.started_at').execute();
  return rows.map(toNodeBeat);
}

/** Deletes a boot's row: it stopped on purpose, so its runs are orphans at once. */
export async function endBeat(db: Db, input: { owner: string }): Promise<void> {
  const o = parseOrThrow(owner, input.owner, 'owner');
  await db.deleteFrom('node_heartbeats').where('owner', '=', o).execute();
}

/** Deletes beats older than `before` (boots long gone). Returns how many. */
export async function pruneHeartbeats(db: Db, input: { before: Date }): Promise<number> {
  const before = parseOrThrow(f.now, input.before, 'before');
  const r = await db.deleteFrom('node_heartbeats').where('beat_at', '<', before).executeTakeFirst();
  return Number(r.numDeletedRows);
}

/** How many running sessions each owner holds (owners with none are absent). */
export async function runningByOwner(db: Db): Promise<Map<string, number>> {
  const rows = await db
    .selectFrom('sessions')
    .select(['owner_node', (eb) => eb.fn.countAll<string>().as('n')])
    .where('status', '=', 'running')
    .where('owner_node', 'is not', null)
    .groupBy('owner_node')
    .execute();
  return new Map(rows.map((r) => [r.owner_node ?? '', Number(r.n)]));
}

/**
 * Says whether this boot's board is watched: a full tick notifies only boots
 * whose row says so (migration 12). Written under the tick's advisory lock,
 * so every tick either committed before this (a catch-up read after it sees
 * it) or runs after it and sees the flag. One statement, so the lock is
 * never held across a round trip: a node that stalls between statements
 * of a transaction would stall every node's ticks. Returns false when the
 * boot has no row yet: its first beat writes the default, watched.
 */
export async function setWatching(
  db: Db,
  input: { owner: string; watching: boolean },
): Promise<boolean> {
  const o = parseOrThrow(owner, input.owner, 'owner');
  const watching = parseOrThrow(z.boolean(), input.watching, 'watching');
  // The join makes the lock's row needed before any row is written.
  const r = await sql<{ owner: string }>`
    WITH lock AS MATERIALIZED (
      SELECT pg_advisory_xact_lock(${LOCK_NAMESPACE}, ${ADVISORY_LOCKS.claimSlot}) AS taken
    )
    UPDATE node_heartbeats h SET watching = ${watching}
    FROM lock WHERE h.owner = ${o}
    RETURNING h.owner`.execute(db);
  return r.rows.length > 0;
}
