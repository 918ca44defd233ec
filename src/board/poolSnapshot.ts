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
  /** The dispatch ticks this node sent since the previous call, each once: round trip and ops carried. */
  tickSamples: Array<{ seconds: number; ops: number }>;
  /** Ticks this node sent that committed, and that failed (each failed one is sent again). */
  ticksTotal: { ok: number; failed: number };
  /** Sessions granted to this node. */
  grantsTotal: number;
  /** Other boots this node's liveness watch found gone, by reason (`beat_stale`, `lock_released`...). */
  ownerDownsTotal: Record<string, number>;
  /**
   * Submissions through this node, by outcome: `queued`, `replayed` (a
   * submission key named a task submitted before), `conflict` (a key in
   * use with another request). Absent: the source does not count them.
   */
  submissionsTotal?: Record<string, number>;
  /**
   * Samples dropped because too many waited for the next call (nobody
   * scrapes `/metrics`; src/actors/runtimeMetrics.ts keeps at most 100,000
   * per series): by series, `wait` or `tick`.
   */
  samplesDroppedTotal: Record<string, number>;
}
