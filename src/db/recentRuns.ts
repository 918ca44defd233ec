/**
 * The durations of the last runs that ended, read from the rows: the start
 * estimates' base (GET /api/stats, `recentDurationsMs`). From the rows, so
 * a node that just started (a deploy) has them at once, and every node of a
 * cluster has the same ones; the UI server adds the runs it sees end after.
 * A run lasts from its grant (the claim, where its card's `running.since`
 * counts from) to its end; a cancelled one says nothing of how long work
 * takes and is left out.
 */
import { sql } from 'kysely';
import { z } from 'zod';
import * as f from './inputs.js';
import { parseOrThrow } from './parseOrThrow.js';
import type { Db } from './transaction.js';

/** Most runs one read returns. */
export const MAX_RECENT_RUNS = 1_000;

const row = z.object({
  id: f.sessionId,
  ms: z.coerce.number().int().min(0),
});

/** One ended run: its session and how long it held its runner. */
export interface RecentRun {
  sessionId: string;
  ms: number;
}

/** The last `limit` runs that succeeded or failed, oldest first. */
export async function recentRuns(db: Db, limit: number): Promise<RecentRun[]> {
  const n = parseOrThrow(z.number().int().min(1).max(MAX_RECENT_RUNS), limit, 'limit');
  const { rows } = await sql<{ id: string; ms: string | number }>`
    SELECT id, ms FROM (
      SELECT id, finished_at,
        greatest(0, round(extract(epoch FROM finished_at - claimed_at) * 1000))::bigint AS ms
      FROM sessions
      WHERE status IN ('succeeded', 'failed')
        AND claimed_at IS NOT NULL AND finished_at IS NOT NULL
      ORDER BY finished_at DESC, id DESC
      LIMIT ${n}
    ) last ORDER BY finished_at, id`.execute(db);
  return rows.map((r) => {
    const parsed = parseOrThrow(row, r, 'recentRuns');
    return { sessionId: parsed.id, ms: parsed.ms };
  });
}
