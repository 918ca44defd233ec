/**
 * The admin views of the board port (boardPort.ts): the dashboard's
 * activity series (GET /api/admin/activity), what `roundtable status` counts
 * (GET /api/admin/status) and the cluster's boots (GET /api/admin/nodes).
 * Each is read from the rows, so every node of a cluster answers the same.
 */

/** Which window the dashboard asks for. */
export interface ActivityQuery {
  minutes: number;
  at?: Date;
}

/**
 * The dashboard's series: columns of equal length, one entry per minute
 * (uPlot's data shape). Queue depth and runners held are sampled at each
 * minute's end; the waits (seconds, enqueue to claim) are those of the runs
 * claimed in it, null when none; succeeded and failed count the runs that
 * ended in it.
 */
export interface ActivitySeries {
  bucketSeconds: number;
  /** Each minute's start, seconds since the epoch. */
  t: number[];
  queued: number[];
  running: number[];
  waitP50: Array<number | null>;
  waitP95: Array<number | null>;
  succeeded: number[];
  failed: number[];
}

/** Sessions by user and status, cap overrides, the enforced caps, and the head of the line. */
export interface LineStatusView {
  counts: Array<{ userId: string; status: string; n: number }>;
  caps: Array<{ userId: string; maxRunning: number }>;
  /** The caps the last tick applied; null until a node has ticked. */
  enforced?: { globalCap: number; defaultUserCap: number } | null;
  /** The first queued sessions in grant order: the i-th has position i + 1. */
  head: Array<{ userId: string; taskId: string; title: string; attempt: number; since: string }>;
}

/** A boot's lock: `none` when lock liveness is off (PGlite, a pooler). */
export type BootLockView = 'held' | 'lost' | 'busy' | 'none';

/** One boot of one node, as the admin view lists it. */
export interface ClusterNodeView {
  owner: string;
  nodeId: string;
  bootId: string;
  /** When the boot first beat (ISO 8601). */
  since: string;
  lastBeat: string;
  /** Its boot lock as `pg_locks` shows it; `unknown` without lock liveness. */
  lock: 'held' | 'released' | 'unknown';
  liveness: 'alive' | 'dead' | 'unknown';
  /**
   * How long a beat of it vouches for it, in ms: silent longer, it is dead.
   * Its own window, as its row says (`--dead-after-ms`), else the answering
   * node's (a row from a node before migration 19).
   */
  deadAfterMs: number;
  /** The boot answering this request. */
  self: boolean;
  sessionsOwned: number;
}
