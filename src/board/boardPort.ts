/**
 * The board port: what the UI server needs from the runtime, and nothing more.
 * The runtime implements it structurally (no class to extend); the tests use
 * the in-memory fake in `test/support/fakeBoard.ts`.
 *
 * This layer (`src/board`) sits below both sides: the runtime (`src/actors`)
 * implements the port with these very types and throws {@link BoardCommandError},
 * the UI server and the client consume them. No `node:*` import here: the
 * browser client imports these types.
 *
 * This file holds the two sides of the port (read: {@link BoardSource}, write:
 * {@link BoardCommands}) and the line; the shapes they carry have a file each
 * and are exported from here too, so importers name the port only: the card
 * (boardCard.ts), the job page (taskDetail.ts), the pool (poolSnapshot.ts),
 * the admin views (adminViews.ts) and the error (boardCommandError.ts).
 */
import type {
  ActivityQuery,
  ActivitySeries,
  BootLockView,
  ClusterNodeView,
  LineStatusView,
} from './adminViews.js';
import type { BoardCard, UserAtCap } from './boardCard.js';
import type { BoardMetricsSnapshot, PoolSnapshot } from './poolSnapshot.js';
import type { Readiness } from './readiness.js';
import type { OutputPage, StoredOutput, TaskDetail } from './taskDetail.js';

export type * from './adminViews.js';
export {
  type BoardCard,
  CARD_LINE_CHARS,
  CARD_OUTPUT_LINES,
  type Column,
  type SessionStatus,
  type UserAtCap,
} from './boardCard.js';
export {
  BOARD_COMMAND_STATUS,
  BoardCommandError,
  type BoardCommandErrorCode,
  BoardStoppedError,
  isBoardCommandError,
} from './boardCommandError.js';
export type { BoardMetricsSnapshot, PoolSnapshot } from './poolSnapshot.js';
export type { OutputPage, StoredOutput, TaskAttemptDetail, TaskDetail } from './taskDetail.js';

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
   * card whose queue position moved because another card left the line
   * (and without `line.atCapOf`, every card whose `queued.atCap` moved).
   * Returns the unsubscribe function. A subscriber counts as someone
   * watching (see {@link BoardSource.watch}) unless it says `passive`.
   */
  subscribe(listener: (card: BoardCard) => void, options?: SubscribeOptions): () => void;
  /**
   * Someone looks at this board until the returned function is called. A
   * source that serves several nodes keeps its cards within one tick of any
   * change on any node only while it is watched; unwatched, changes other
   * nodes made reach it with its own next tick or poll. Absent: the source
   * is always exact (one node, or a fake).
   */
  watch?(): () => void;
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

/** How a subscriber listens. */
export interface SubscribeOptions {
  /**
   * It keeps derived state (counts, an index), not a screen: it does not
   * make the source watched. Its cards come as they reach the source.
   */
  readonly passive?: boolean;
  /**
   * Told of cards that left the board, by task id: finished work past the
   * source's retention (its rows are deleted). A subscriber that keeps
   * cards drops these. Absent: it is not told (and keeps what it kept).
   */
  readonly onRemoved?: (taskIds: readonly string[]) => void;
}

/** Positions derived, not stored: see {@link BoardSource.line}. */
export interface BoardLine {
  /** The key of the card's session, or null when the source knows none. */
  keyOf(card: BoardCard): LineKey | null;
  /** The card's position now (0: granted, its claim being written), or null when unknown. */
  positionOf(card: BoardCard): number | null;
  /**
   * The card's `queued.atCap` now: it moves with the user's running count
   * and cap, without the card changing. Absent: the cards carry their own.
   */
  atCapOf?(card: BoardCard): UserAtCap | null;
  /**
   * Calls `listener` (at any time after) when positions or a user's
   * at-cap state moved. Returns the unsubscribe function.
   */
  subscribe(listener: () => void): () => void;
}

/** Input of a new task; the runtime validates the run spec in depth. */
export interface CreateTaskInput {
  title: string;
  image: string;
  command: readonly string[];
  env?: Record<string, string>;
  /**
   * An idempotency key, unique per user (1-255 visible ASCII characters):
   * submitting again with a key one of the user's kept tasks has queues
   * nothing and answers that task (`replayed`), so a caller whose answer
   * was lost can safely ask again. The same key with another title or spec
   * is a `conflict`. A key is free again once its task is pruned (retention).
   */
  key?: string;
  /**
   * How long a run of the task may hold its runner, in ms (1 s to ~24.8
   * days), counted from its grant: past it the run is failed as `timed_out`
   * (its output so far kept) and stopped, and its slot goes to the next in
   * line. Every attempt has the same limit. Absent: none.
   */
  timeLimitMs?: number;
}

/**
 * Write side. `actor` is the calling user, or `null` for the admin, who may
 * act on any user's task. A task that `actor` may not see is `not_found`,
 * never `forbidden`, so ids of other users' tasks do not leak.
 * Failures reject with a {@link BoardCommandError}; so do the reads of
 * rows here (`taskDetail`, `lineStatus`, ...) whose store did not answer
 * (`unavailable`: the API's 503). A command the node refused because it is
 * stopping rejects with a {@link BoardStoppedError} (also a 503); anything
 * else they reject with is a bug.
 */
export interface BoardCommands {
  /**
   * Enqueue always succeeds (rule 4): it returns the card's position in line,
   * 0 when it got a runner at once; never "full".
   */
  createTask(
    userId: string,
    input: CreateTaskInput,
  ): Promise<{
    taskId: string;
    sessionId: string;
    position: number;
    /** The input's key named a task submitted before (see `key`); absent: false. */
    replayed?: boolean;
  }>;
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
   * One page of that output, reading only what the page needs (lines `from`
   * on, or the last `count`; docs/board-protocol.md); null when none.
   * Optional: without it a page is cut from `taskOutput`'s whole text.
   */
  taskOutputPage?(
    actor: string | null,
    taskId: string,
    sessionId: string,
    range: { from: number | undefined; count: number },
  ): Promise<OutputPage | null>;
  /**
   * That output whole, as UTF-8 in bounded parts read one at a time (a
   * download); null when none. Optional: without it `taskOutput` is sent.
   */
  taskOutputBytes?(
    actor: string | null,
    taskId: string,
    sessionId: string,
  ): Promise<AsyncIterable<Uint8Array> | null>;
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
    /** How other nodes' ticks reach it: NOTIFY, or the poll alone (a transaction pooler, a lost listener). */
    notifications?: 'listening' | 'polling';
  };
  /**
   * Whether the node is ready for work (GET /readyz): booted, taking grants,
   * its store answering a trivial query within a short deadline, and not
   * stopping; else every reason it is not (src/board/readiness.ts). Never
   * rejects. Optional: without it /readyz answers from the UI server alone.
   */
  readiness?(): Promise<Readiness>;
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
  /**
   * The last `limit` runs that ended (succeeded or failed), oldest first,
   * with how long each held its runner, read from the rows: the start
   * estimates' durations survive a restart and are the same on every node.
   * Optional: without it the UI server counts only the runs it sees end.
   */
  recentRuns?(limit: number): Promise<ReadonlyArray<{ sessionId: string; ms: number }>>;
}
