/**
 * What the cluster liveness watch (src/actors/clusterLiveness.ts) reads on
 * every poll: every boot's heartbeat row and the boot lock keys held now, in
 * ONE statement. The watch polls 4 times a second on every node; as two
 * autocommit statements (`listBeats`, then `heldBootKeys`) its polls were
 * about 0.09 of the 0.25 commits per job of the 3-node benchmark.
 *
 * The held keys are aggregated into one row that the rows are left-joined
 * to, so the keys come back even when there is no row at all (a boot whose
 * row was pruned or ended is still judged by its lock). The rows are read in
 * the statement's snapshot, taken before `pg_locks` is read: a row seen was
 * written before its lock was looked at, as when the two were apart.
 *
 * Without lock liveness (PGlite: one process; a node behind a pooler) the
 * reading is the rows alone and `pg_locks` is not touched.
 */
import { sql } from 'kysely';
import { heldBootKeysQuery } from './bootLock.js';
import {
  type BeatRow,
  beatsQuery,
  listBeats,
  type NodeBeat,
  toNodeBeat,
} from './nodeHeartbeats.js';
import type { Db } from './transaction.js';

/** One look at the cluster: the rows, and the boot locks held (null: not read). */
export interface LivenessReading {
  /** Every boot's row, oldest start first (as `listBeats`). */
  beats: NodeBeat[];
  /** The boot lock keys held now (as `heldBootKeys`); null when `locks` was false. */
  held: Set<number> | null;
}

/** A left-joined row: every column of a beat, or none (no row at all). */
type MaybeBeat = { [K in keyof BeatRow]: BeatRow[K] | null };

/** A joined row carries a beat when its `owner`, the table's key and never null, is there. */
function isBeat<R extends MaybeBeat>(r: R): r is R & BeatRow {
  return r.owner !== null;
}

/**
 * The rows, and with `locks` the held boot lock keys, in one statement.
 *
 * @example
 * ```ts
 * const { beats, held } = await readLiveness(db, { locks: true });
 * // held?.has(bootLockKey(owner)): that boot holds its lock now
 * ```
 */
export async function readLiveness(db: Db, input: { locks: boolean }): Promise<LivenessReading> {
  if (!input.locks) return { beats: await listBeats(db), held: null };
  const keys = sql<{ keys: Array<string | number> }>`(
    SELECT coalesce(array_agg(b.k), '{}') AS keys FROM (${heldBootKeysQuery()}) AS b
  )`;
  const rows = await db
    .selectFrom(keys.as('l'))
    .leftJoin(beatsQuery(db).as('beat'), (j) => j.onTrue())
    .selectAll('beat')
    .select('l.keys')
    .orderBy('beat.started_at')
    .execute();
  const held = new Set((rows[0]?.keys ?? []).map(Number));
  return { beats: rows.filter(isBeat).map(toNodeBeat), held };
}
