/**
 * What the board port says of the pool: its occupancy (GET /api/pool, the
 * board's counts and estimates) and what `/metrics` exports. Part of the
 * board port (boardPort.ts).
 */

/** Pool occupancy. Non-admin callers get only their own row in `users`. */
export interface PoolSnapshot {
  /** Global cap on runners held at once. */
  maxRunning: number;
  running: number;
  queued: number;
  users: Array<{ userId: string; running: number; queued: number; maxRunning: number | null }>;
}

/**
 * What `/metrics` exports. Totals are monotonic since the runtime started;
 * `waitSamplesSeconds` holds the waits (enqueue to grant) recorded since the
 * previous call, each reported exactly once, so the server feeds them to one
 * cumulative histogram.
 */
export interface BoardMetricsSnapshot {
  queueDepth: Array<{ userId: string; queued: number }>;
  running: Array<{ userId: string; running: number }>;
  waitSamplesSeconds: number[];
  restartsTotal: number;
  giveUpsTotal: Record<string, number>;
}
