/**
 * The admin dashboard's series, computed from the sessions' own timestamps
 * (enqueued_at, claimed_at, finished_at) in one query, so every node on one
 * database draws the same cluster-wide picture and a node that just started
 * still shows the last hour. A session row goes queued -> running ->
 * finished once (a retry or a requeue is a new row), so at any instant it is
 * queued exactly between its enqueue and its claim (or its cancel), and
 * running between its claim and its finish.
 *
 * Buckets are whole minutes, the last one the minute holding `at`. Per
 * bucket: the queue depth and the runners held at its end (at `at` for the
 * current minute, whose end has not come), the nearest-rank p50/p95 of the
 * waits (enqueue to claim) of the sessions claimed in it, and how many
 * sessions succeeded or failed in it.
 */
import { sql } from 'kysely';
import { z } from 'zod';
import * as f from './inputs.js';
import { parseOrThrow } from './parseOrThrow.js';
import type { Db } from './transaction.js';

/** Longest window the dashboard may ask for: one day of minutes. */
export const MAX_ACTIVITY_MINUTES = 1440;
export const BUCKET_SECONDS = 60;

const activityInput = z.strictObject({
  minutes: z.number().int().min(1).max(MAX_ACTIVITY_MINUTES),
  at: f.now,
});
export type ActivityInput = z.input<typeof activityInput>;

/**
 * Columns of equal length, one entry per bucket (uPlot's data shape); the
 * board port's `ActivitySeries` has the same shape (a test holds them equal).
 */
export interface ActivityRows {
  bucketSeconds: number;
  /** Each bucket's start, seconds since the epoch. */
  t: number[];
  queued: number[];
  running: number[];
  /** Seconds; null for a minute in which nothing was claimed. */
  waitP50: Array<number | null>;
  waitP95: Array<number | null>;
  succeeded: number[];
  failed: number[];
}

type Row = {
  t0: Date | string;
  queued: string | number;
  running: string | number;
  wait_p50: string | number | null;
  wait_p95: string | number | null;
  succeeded: string | number;
  failed: string | number;
};

const num = (v: string | number) => Number(v);
const numOrNull = (v: string | number | null) => (v === null ? null : Number(v));

/** The last `minutes` minutes up to `at`, per minute, read from the rows. */
export async function readActivity(db: Db, input: ActivityInput): Promise<ActivityRows> {
  const i = parseOrThrow(activityInput, input, '');
  const lastStart = Math.floor(i.at.getTime() / 60_000) * 60_000;
  const first = new Date(lastStart - (i.minutes - 1) * 60_000);
  const at = i.at;
  // Only the rows that overlap the window are read, once (MATERIALIZED),
  // then counted against every bucket; `s` is the instant a bucket samples.
  const { rows } = await sql<Row>`
    WITH w AS MATERIALIZED (
      SELECT enqueued_at, claimed_at, finished_at, status FROM sessions
      WHERE enqueued_at <= ${at}::timestamptz
        AND (finished_at IS NULL OR finished_at >= ${first}::timestamptz)
    ), b AS (
      SELECT g AS t0, g + interval '1 minute' AS t1, least(g + interval '1 minute', ${at}::timestamptz) AS s
      FROM generate_series(${first}::timestamptz, ${new Date(lastStart)}::timestamptz, interval '1 minute') AS g
    )
    SELECT b.t0,
      count(w.enqueued_at) FILTER (WHERE w.enqueued_at <= b.s
        AND (w.claimed_at IS NULL OR w.claimed_at > b.s)
        AND (w.finished_at IS NULL OR w.finished_at > b.s)) AS queued,
      count(w.enqueued_at) FILTER (WHERE w.claimed_at <= b.s
        AND (w.finished_at IS NULL OR w.finished_at > b.s)) AS running,
      percentile_disc(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM w.claimed_at - w.enqueued_at))
        FILTER (WHERE w.claimed_at >= b.t0 AND w.claimed_at < b.t1) AS wait_p50,
      percentile_disc(0.95) WITHIN GROUP (ORDER BY extract(epoch FROM w.claimed_at - w.enqueued_at))
        FILTER (WHERE w.claimed_at >= b.t0 AND w.claimed_at < b.t1) AS wait_p95,
      count(w.enqueued_at) FILTER (WHERE w.status = 'succeeded'
        AND w.finished_at >= b.t0 AND w.finished_at < b.t1) AS succeeded,
      count(w.enqueued_at) FILTER (WHERE w.status = 'failed'
        AND w.finished_at >= b.t0 AND w.finished_at < b.t1) AS failed
    FROM b LEFT JOIN w ON true
    GROUP BY b.t0 ORDER BY b.t0
  `.execute(db);
  return {
    bucketSeconds: BUCKET_SECONDS,
    t: rows.map((r) => new Date(r.t0).getTime() / 1000),
    queued: rows.map((r) => num(r.queued)),
    running: rows.map((r) => num(r.running)),
    waitP50: rows.map((r) => numOrNull(r.wait_p50)),
    waitP95: rows.map((r) => numOrNull(r.wait_p95)),
    succeeded: rows.map((r) => num(r.succeeded)),
    failed: rows.map((r) => num(r.failed)),
  };
}
