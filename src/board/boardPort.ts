/**
 * The board port: what the UI server needs from the runtime, and nothing more.
 * The runtime implements it structurally (no class to extend); the tests use
 * the in-memory fake in `test/support/fakeBoard.ts`.
 *
 * Rule 4 of DESIGN.md lives in the card: `queued` (waiting in line, with a
 * position) and `running` (holds a runner) are separate fields, and at most
 * one of them is non-null.
 *
 * This layer (`src/board`) sits below both sides: the runtime (`src/actors`)
 * implements the port with these very types and throws {@link BoardCommandError},
 * the UI server and the client consume them. No `node:*` import here: the
 * browser client imports these types.
 */

/** The board column a card sits in. */
export type Column = 'queued' | 'running' | 'done' | 'failed';

/** Status of the card's current session (one attempt to run the task). */
export type SessionStatus = 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';

/**
 * One task as the board shows it: the task plus its latest session.
 *
 * Contract for the runtime:
 * - `queued` is non-null exactly when the session waits for a runner;
 *   `position` is 1-based within the global line (1 = next to be granted);
 *   0 means the pool has just granted it a runner and the claim is being
 *   written (the row still says queued): the page shows it as starting.
 * - `running` is non-null exactly when the session holds a runner.
 * - `failure` is non-null exactly when `status` is `failed`.
 * - `lastOutput` holds at most {@link CARD_OUTPUT_LINES} lines of at most
 *   {@link CARD_LINE_CHARS} characters; a cut line ends with `…`.
 * - `updatedAt` and every `since` are ISO-8601 UTC strings.
 */
export interface BoardCard {
  taskId: string;
  userId: string;
  title: string;
  column: Column;
  sessionId: string;
  /** 1 for the first session of a task; each retry adds one. */
  attempt: number;
  status: SessionStatus;
  queued: { position: number; since: string } | null;
  running: { since: string } | null;
  failure: { reason: string; recoverable: boolean } | null;
  exitCode: number | null;
  lastOutput: string[];
  updatedAt: string;
  /**
   * Why the task's previous attempt ended, on an attempt after the first
   * (a re-queue after `container_replaced` keeps its place in line and says
   * why it runs again). Absent or null on a first attempt.
   */
  previous?: { attempt: number; reason: string } | null;
}

/** Most output lines a card carries; the full log lives elsewhere. */
export const CARD_OUTPUT_LINES = 20;
/** Longest output line a card carries before it is cut (and marked with `…`). */
export const CARD_LINE_CHARS = 500;

/**
 * Read side. Both methods are synchronous so that a snapshot and the sequence
 * number the server stamps on it describe the same instant.
 */
export interface BoardSource {
  /**
   * Every card of `userId`, or of every user when `userId` is `null` (admin).
   * The filter belongs in the query, not after it (DESIGN.md, security).
   */
  cards(userId: string | null): BoardCard[];
  /**
   * Calls `listener` synchronously, in commit order, with the new state of
   * every card that changed; without {@link BoardSource.line}, also every
   * card whose queue position moved because another card left the line.
   * Returns the unsubscribe function.
   */
  subscribe(listener: (card: BoardCard) => void): () => void;
  /**
   * The line, for a source whose positions move without its cards changing
   * (one grant moves every card behind it). With it, `subscribe` need not
   * emit a card only because its position moved: the UI server orders the
   * queued cards by their keys and asks the positions of the cards it shows
   * when it shows them. Without it, every moved card is emitted.
   */
  readonly line?: BoardLine;
}

/**
 * A queued card's key in the order grants follow: keys order like
 * positions (smaller is earlier, `turn` then `joinSeq`) and a card keeps
 * its key while it waits, so the line's order does not move when its head
 * leaves; only the positions do (docs/data.md, "Positions are exact").
 */
export interface LineKey {
  readonly turn: number;
  readonly joinSeq: number;
}

/** Positions derived, not stored: see {@link BoardSource.line}. */
export interface BoardLine {
  /** The key of the card's session, or null when the source knows none. */
  keyOf(card: BoardCard): LineKey | null;
  /** The card's position now (0: granted, its claim being written), or null when unknown. */
  positionOf(card: BoardCard): number | null;
  /** Calls `listener` (at any time after) when positions moved. Returns the unsubscribe function. */
  subscribe(listener: () => void): () => void;
}

/** Input of a new task; the runtime validates the run spec in depth. */
export interface CreateTaskInput {
  title: string;
  image: string;
  command: string[];
  env?: Record<string, string>;
}

/** One attempt of a task on its job page. Times are ISO-8601 UTC strings, or null. */
export interface TaskAttemptDetail {
  sessionId: string;
  attempt: number;
  status: string;
  enqueuedAt: string;
  claimedAt: string | null;
  startedAt: string | null;
  finishedAt: string | null;
  exitCode: number | null;
  failureReason: string | null;
  /** The owner (`node@boot`) that holds or last held it. */
  node: string | null;
  backend: string | null;
  handle: string | null;
  /** Its status changes, oldest first, each with the reason it was made. */
  events: Array<{
    from: string | null;
    to: string;
    reason: string | null;
    node: string | null;
    at: string;
  }>;
}

/** A task for its job page: what it runs and every attempt, oldest first. */
export interface TaskDetail {
  taskId: string;
  userId: string;
  title: string;
  image: string;
  command: string[];
  /** The names of its environment variables; the values (often secrets) never leave the store. */
  envKeys: string[];
  createdAt: string;
  attempts: TaskAttemptDetail[];
}

/** A finished attempt's stored output (whole up to 16 MiB; a cut is marked in `text`). */
export interface StoredOutput {
  text: string;
  totalBytes: number;
  truncated: boolean;
}

/** One page of an attempt's stored output (`GET /api/tasks/:id/sessions/:sid/output`). */
export interface OutputPage {
  sessionId: string;
  /** Index of the first line in `lines` (0-based). */
  from: number;
  lines: string[];
  totalLines: number;
  totalBytes: number;
  truncated: boolean;
}

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

/**
 * Write side. `actor` is the calling user, or `null` for the admin, who may
 * act on any user's task. A task that `actor` may not see is `not_found`,
 * never `forbidden`, so ids of other users' tasks do not leak.
 * Failures reject with a {@link BoardCommandError}.
 */
export interface BoardCommands {
  /**
   * Enqueue always succeeds (rule 4): it returns the card's position in line,
   * 0 when it got a runner at once; never "full".
   */
  createTask(
    userId: string,
    input: CreateTaskInput,
  ): Promise<{ taskId: string; sessionId: string; position: number }>;
  cancel(actor: string | null, taskId: string): Promise<void>;
  /** A new session (attempt + 1) for a failed or cancelled task. */
  retry(actor: string | null, taskId: string): Promise<{ sessionId: string; position: number }>;
  /** `null` removes the override (the default per-user cap applies). */
  setUserCap(userId: string, maxRunning: number | null): Promise<void>;
  poolSnapshot(): PoolSnapshot;
  metrics(): BoardMetricsSnapshot;
  /**
   * A task for its job page as `actor` may see it (the user filter in the
   * query); null when there is none or it is another user's. Optional: a
   * source without it has no job pages (404).
   */
  taskDetail?(actor: string | null, taskId: string): Promise<TaskDetail | null>;
  /** The stored output of one attempt of `taskId`, as `actor` may see it; null when none. */
  taskOutput?(
    actor: string | null,
    taskId: string,
    sessionId: string,
  ): Promise<StoredOutput | null>;
  /**
   * The node's container engine as its last start or probe found it; shown
   * on `/healthz` and the board. Optional: a source with no engine omits it.
   */
  health?(): {
    engine: 'available' | 'unavailable';
    /** Which backend runs the work and what chose it (`roundtable start` sets it). */
    backend?: { name: string; reason: string };
    /** This boot's lock (cluster liveness); absent on a source with no cluster. */
    lock?: BootLockView;
    /** This node's part in the Reconciler's leadership (`none`: no leader lock). */
    reconciler?: 'leader' | 'follower' | 'lost' | 'none';
  };
  /**
   * Every boot with a heartbeat row (the admin view of the cluster: GET
   * /api/admin/nodes). Optional: a source with no cluster omits it.
   */
  clusterNodes?(): Promise<ClusterNodeView[]>;
  /**
   * What `roundtable status` counts, read from the rows (GET /api/admin/status),
   * so the CLI's answer through a node is the one it reads from the rows.
   * Optional: a source with no rows omits it.
   */
  lineStatus?(headSize: number): Promise<LineStatusView>;
  /**
   * The admin dashboard's per-minute series over the last `minutes` up to
   * `at` (the source's own clock when absent), computed from the rows, so
   * every node of a cluster answers the same (GET /api/admin/activity).
   * Optional: a source with no rows omits it.
   */
  activity?(query: ActivityQuery): Promise<ActivitySeries>;
}

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

/** Sessions by user and status, cap overrides, and the head of the line. */
export interface LineStatusView {
  counts: Array<{ userId: string; status: string; n: number }>;
  caps: Array<{ userId: string; maxRunning: number }>;
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
  /** The boot answering this request. */
  self: boolean;
  sessionsOwned: number;
}

/** Stable codes of command failures, each with its HTTP status. */
export const BOARD_COMMAND_STATUS = {
  not_found: 404,
  conflict: 409,
  invalid: 422,
  unavailable: 503,
} as const;

/** A code of {@link BoardCommandError}. */
export type BoardCommandErrorCode = keyof typeof BOARD_COMMAND_STATUS;

/**
 * The one error type commands reject with. `conflict`: the task is not in a
 * state that allows it (cancel a finished task, retry a running one);
 * `invalid`: the runtime refused the input; `unavailable`: try again later.
 */
export class BoardCommandError extends Error {
  override readonly name = 'BoardCommandError';
  constructor(
    readonly code: BoardCommandErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * True for a command failure: a {@link BoardCommandError}, by class (the
 * runtime throws this very class). An error that only looks like one (same
 * `name` and `code`) is not: it is a bug, and the server answers 500.
 *
 * @example
 * ```ts
 * isBoardCommandError(new BoardCommandError('not_found', 'no such task')) // => true
 * isBoardCommandError(Object.assign(new Error('x'), { name: 'BoardCommandError', code: 'conflict' })) // => false
 * isBoardCommandError(new Error('boom')) // => false
 * ```
 */
export function isBoardCommandError(err: unknown): err is BoardCommandError {
  return err instanceof BoardCommandError;
}
