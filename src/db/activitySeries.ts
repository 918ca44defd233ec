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
import type { ActivitySeries } from '../board/adminViews.js';
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
 * Columns of equal length, one entry per bucket (uPlot's data shape): the
 * board port's `ActivitySeries` itself, which the store fills.
 */
export type ActivityRows = ActivitySeries;

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
  // The rows that overlap the window are read once (MATERIALIZED); the
  // depth and the runners are the state at the window's start plus each
  // minute's arrivals and departures, summed in order, so the cost is one
  // pass over those rows and not one per minute (a long queue is mostly
  // rows that arrived before the window). An event at a minute's end belongs
  // to that minute (the state is sampled at its end, or at `at`).
  const { rows } = await sql<Row>`
    WITH r AS MATERIALIZED (
      SELECT enqueued_at AS enq, claimed_at AS clm, finished_at AS fin, status,
        coalesce(claimed_at, finished_at) AS leave
      FROM sessions
      WHERE enqueued_at <= ${at}::timestamptz
        AND (finished_at IS NULL OR finished_at >= ${first}::timestamptz)
    ), base AS (
      SELECT
        count(*) FILTER (WHERE enq <= ${first}::timestamptz
          AND (leave IS NULL OR leave > ${first}::timestamptz)) AS q,
        count(*) FILTER (WHERE clm <= ${first}::timestamptz
          AND (fin IS NULL OR fin > ${first}::timestamptz)) AS r
      FROM r
    ), moves AS (
      SELECT ceil(extract(epoch FROM e.t - ${first}::timestamptz) / 60)::int - 1 AS i,
        sum(e.dq) AS dq, sum(e.dr) AS dr
      FROM r, LATERAL (VALUES (r.enq, 1, 0), (r.leave, -1, 0), (r.clm, 0, 1),
        (r.fin, 0, CASE WHEN r.clm IS NULL THEN 0 ELSE -1 END)) AS e(t, dq, dr)
      WHERE e.t > ${first}::timestamptz AND e.t <= ${at}::timestamptz
      GROUP BY 1
    ), ended AS (
      SELECT floor(extract(epoch FROM fin - ${first}::timestamptz) / 60)::int AS i,
        count(*) FILTER (WHERE status = 'succeeded') AS succeeded,
        count(*) FILTER (WHERE status = 'failed') AS failed
      FROM r WHERE fin >= ${first}::timestamptz AND fin <= ${at}::timestamptz
      GROUP BY 1
    ), waits AS (
      SELECT floor(extract(epoch FROM clm - ${first}::timestamptz) / 60)::int AS i,
        percentile_disc(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM clm - enq)) AS p50,
        percentile_disc(0.95) WITHIN GROUP (ORDER BY extract(epoch FROM clm - enq)) AS p95
      FROM r WHERE clm >= ${first}::timestamptz AND clm <= ${at}::timestamptz
      GROUP BY 1
    )
    SELECT ${first}::timestamptz + b.i * interval '1 minute' AS t0,
      base.q + sum(coalesce(moves.dq, 0)) OVER (ORDER BY b.i) AS queued,
      base.r + sum(coalesce(moves.dr, 0)) OVER (ORDER BY b.i) AS running,
      waits.p50 AS wait_p50, waits.p95 AS wait_p95,
      coalesce(ended.succeeded, 0) AS succeeded, coalesce(ended.failed, 0) AS failed
    FROM generate_series(0, ${i.minutes - 1}::int) AS b(i)
      CROSS JOIN base
      LEFT JOIN moves ON moves.i = b.i
      LEFT JOIN ended ON ended.i = b.i
      LEFT JOIN waits ON waits.i = b.i
    ORDER BY b.i
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
