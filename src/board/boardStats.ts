/**
 * What `/api/stats` answers (src/ui-server/boardStats.ts computes it, the
 * client's start estimates read it): part of the board's contract, so both
 * sides import it from here. No `node:*` import: the browser bundle uses it.
 */

/** One point of the dashboard's charts. */
export interface StatsPoint {
  /** Milliseconds since the epoch. */
  at: number;
  queued: number;
  running: number;
  /** Seconds; null when no run was granted in the window. */
  waitP50: number | null;
  waitP95: number | null;
  failures: number;
}

/** What `/api/stats` answers. */
export interface BoardStatsSnapshot {
  /** Durations of recently finished runs (any user's: numbers only), oldest first. */
  recentDurationsMs: number[];
  /** The last hour; the admin's only (empty for a user). */
  series: StatsPoint[];
}
