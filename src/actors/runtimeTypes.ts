/**
 * The public API of the runtime: what `createRuntime` takes and what it
 * returns. Kept apart from the assembly so the CLI, the inspector and the
 * board server can code against it without pulling the tree in.
 *
 * The `Runtime` implements the board port of `src/board/boardPort.ts`
 * (BoardSource + BoardCommands): that layer sits below this one and the UI
 * server, so both sides use its types and its error class, written once.
 */
import type { InspectionEvent, Observer } from 'xstate';
import {
  type BoardCard,
  BoardCommandError,
  type BoardCommandErrorCode,
  type BoardCommands,
  type BoardMetricsSnapshot,
  type BoardSource,
  type Column,
  type CreateTaskInput,
  type OutputPage,
  type PoolSnapshot,
  type TaskDetail,
} from '../board/boardPort.js';
import type { Readiness } from '../board/readiness.js';
import type { ContainerBackend } from '../containers/ContainerBackend.js';
import type {
  ActivityRows,
  Db,
  LeaderState,
  LineStatusRows,
  OutputPageRange,
  RecentRun,
  Session,
  SessionOutput,
  Task,
} from '../db/index.js';
import type { SelfLock } from '../machines/livenessPolicy.js';
import type { SupervisorClock } from '../supervisor/clock.js';
import type { SupervisorEvent } from '../supervisor/events.js';
import type { InspectionGate } from '../supervisor/inspectionGate.js';
import type { Supervisor } from '../supervisor/Supervisor.js';
import type { BootLockPort, ClusterNode } from './clusterLiveness.js';
import type { OwnerLiveness } from './ownerLiveness.js';
import type { PassReport } from './reconcilerSteps.js';
import type { RuntimeExit } from './runtimeExit.js';
import type { TickNotifications } from './runtimeFeed.js';

export type { OwnerLiveness } from './ownerLiveness.js';
export { describeRuntimeExit, type RuntimeExit, RuntimeStoppedError } from './runtimeExit.js';

/** Global and default per-user concurrency caps. */
export interface RuntimeCaps {
  /** Most sessions running at once, over every node. */
  maxRunning: number;
  /** A user's cap when they have no override row. */
  defaultUserCap: number;
}

/**
 * Options of `createRuntime`: only `db` and `backend` are required. Unknown
 * keys are rejected with a suggestion (src/actors/runtimeOptions.ts).
 */
export interface RuntimeOptions {
  /** The store, migrated. The runtime never closes it. */
  db: Db;
  backend: ContainerBackend;
  /** Drives every timer: polls, budgets, ticks, supervisor restarts. Default `systemClock`. */
  clock?: SupervisorClock;
  /** Default `{ maxRunning: 4, defaultUserCap: 2 }` (the CLI's). */
  caps?: RuntimeCaps;
  /** Delay between two looks at an adopted run. Default 5000. */
  pollMs?: number;
  /** Wall-clock budget of one adoption (the second way out). Default 15 min. */
  adoptBudgetMs?: number;
  /** Reconciler period. Default 60 000. */
  reconcileMs?: number;
  /**
   * How long finished work is kept: a task whose every attempt ended this
   * long ago leaves every node's board, and the Reconciler deletes its
   * rows (its sessions, history and output). `null`: kept for ever (the
   * store and every board then grow with every job). Default 7 days.
   */
  retentionMs?: number | null;
  /**
   * The time limit of a task submitted through this node without one
   * (`CreateTaskInput.timeLimitMs`, 1,000 to 2,147,483,647 ms): an
   * operator's bound on how long any run may hold a runner. Stored on the
   * task at submission, so it holds on whichever node runs it. `null`
   * (default): none.
   */
  defaultTimeLimitMs?: number | null;
  /**
   * This machine's stable name (e.g. the host name). The owner written on
   * rows is `${nodeId}@${bootId}`: a new boot is a new owner, so a deploy
   * makes every run of the previous boot an orphan the Reconciler can see.
   * Default: the host name, reduced to [A-Za-z0-9_.:-].
   */
  nodeId?: string;
  /** Overrides the random per-boot id (tests, for readable owners). */
  bootId?: string;
  /**
   * When set, the Reconciler's step 1 re-pins every run to this image at
   * boot and on each tick, and recovers the runs the re-pin replaced.
   */
  runnerImage?: string;
  /**
   * Who else is alive. Default: the `node_heartbeats` rows (another boot of
   * this node is gone at once; another node is alive until it has missed
   * `heartbeatStaleBeats` beats). See docs/runtime.md.
   */
  liveness?: OwnerLiveness;
  /**
   * The store's boot lock (the store handle, `holdBootLock`; src/db/bootLock.ts).
   * Given on a Postgres server, this boot holds its lock for as long as it
   * lives, takes no grants while it cannot, and watches the other boots'
   * locks every `livenessPollMs`: a death is a DOWN within that period, and
   * a Reconciler pass acts on it at once (src/actors/clusterLiveness.ts).
   * Absent, or null on PGlite: the heartbeat rows alone decide.
   */
  bootLock?: BootLockPort;
  /**
   * Without a boot lock (behind a transaction pooler, where none can be
   * held), watch the other boots' heartbeat rows every `livenessPollMs`
   * anyway: a beat older than `heartbeatMs * heartbeatStaleBeats`, or a row
   * gone, is a DOWN and a Reconciler pass at once, instead of waiting for
   * the next periodic pass. Pair it with a short `heartbeatMs`. Default:
   * on when `bootLock` is a handle opened with `pooler: 'transaction'`, else
   * off; moot while this boot holds a lock (that watch reads the rows too).
   * With such a handle `reconcileLock: true` is refused (RuntimeOptionError):
   * the session lock would stay on a pooled server connection.
   */
  watchBeats?: boolean;
  /** How often the other boots' locks and rows are read. Default 250. */
  livenessPollMs?: number;
  /** How often this boot writes its heartbeat row. Default reconcileMs / 3. */
  heartbeatMs?: number;
  /** Missed beats after which another node's owner counts as gone. Default 3. */
  heartbeatStaleBeats?: number;
  /**
   * Deadline of one Reconciler pass: past it the pass is abandoned (it stops
   * at its next step) and the advisory lock is given back. Default
   * 5 * max(reconcileMs, ioTimeoutMs).
   */
  passTimeoutMs?: number;
  /**
   * One Reconciler acts at a time over every node, by the Postgres advisory
   * lock. With the store handle as `bootLock` (its `holdLeaderLock`), one
   * node leads and runs every pass; the others wait for the lock and one of
   * them leads, with a pass at once, within a round trip of the leader's
   * death (src/actors/reconcilerLeader.ts). Without a leader lock each pass
   * takes the lock on a pooled connection and a pass that cannot is skipped.
   * Needs a pool of more than one connection: never with PGlite. Default: on
   * when `bootLock` can hold a lock (a Postgres server), off otherwise.
   */
  reconcileLock?: boolean;
  /**
   * Deadline of every container I/O call made by a run. Default 120 000.
   * With `storeDeadlineMs`, how long a live owner's run past its time limit
   * is left to that owner before this node's Reconciler takes it
   * (src/actors/runTimeLimit.ts `overdueGraceMs`).
   */
  ioTimeoutMs?: number;
  /**
   * XState inspection: an observer given to every actor in the tree, or an
   * `InspectionGate` (the inspector's `gate`) that sees the actors only
   * while it is open and the supervision events always.
   */
  inspect?: Observer<InspectionEvent> | ((event: InspectionEvent) => void) | InspectionGate;
  /** Errors no caller awaits (a failed sweep, a failed container removal). Default: process warning. */
  onError?: (error: unknown) => void;
  /**
   * Most sessions this node runs at once (its share of `caps.maxRunning`,
   * which the database enforces over every node). Default caps.maxRunning.
   */
  localMax?: number;
  /**
   * NOTIFY for other nodes' ticks (the store handle's `listen`): positions
   * and grants follow them at once. Without it, or while it is lost, the
   * node polls the tick number every `dispatchPollMs`.
   */
  notifications?: TickNotifications;
  /** Fallback poll of other nodes' ticks. Default 1000. */
  dispatchPollMs?: number;
  /**
   * Board subscribers are told of moved positions at most this often (a
   * card's own changes are told at once; `cards()` is exact as of the
   * last tick this node has seen: within one tick of any node's change
   * while the board is watched, else within `dispatchPollMs`; see
   * BoardSource.watch). Default 100.
   */
  positionPushMs?: number;
  /**
   * How often a running card's output is shared with the other nodes'
   * boards: the node that runs it writes the card's last lines at most this
   * often when they changed and another node's board is watched, and a
   * node whose board is watched reads those
   * of runs held elsewhere as often (src/actors/liveTailShare.ts). Its own
   * runs' output reaches its own board at once. `null`: not shared (a
   * running card on another node shows no output until the run ends).
   * Default 1000.
   */
  liveOutputMs?: number | null;
  /**
   * How long a write waits for the store to take it (a tick that keeps
   * failing) before its caller is told `unavailable`, and how long a runner
   * keeps retrying a read while the store is down. Default 60 000.
   */
  storeDeadlineMs?: number;
  /**
   * How long the store may fail before a caller's command (submit, cancel,
   * retry, a user's cap) is answered `unavailable` instead of waiting for
   * `storeDeadlineMs`; while it keeps failing, later commands are answered
   * at once and never sent. A shorter outage (a restart, a quick failover)
   * stays invisible to callers: their commands ride the first tick that
   * commits. A runner's own writes always wait for the store. Default
   * 10 000.
   */
  commandOutageMs?: number;
  /** Which store errors are retried. Default `isTransientDbError` (src/db). */
  isTransient?: (error: unknown) => boolean;
}

/** What `Runtime.health()` says of the node's outside parts. */
export interface RuntimeHealth {
  /** The container engine, as the last start or probe found it. */
  engine: 'available' | 'unavailable';
  /** How other nodes' ticks reach this node. */
  notifications: 'listening' | 'polling';
  /** The tick up to which this node has applied every change (its board is exact as of it). */
  tick: number;
  /** Sessions this node runs now. */
  holding: number;
  /** Writes waiting for a tick. */
  backlog: number;
  /**
   * This boot's lock (`none`: no lock liveness, PGlite or no port). While
   * `lost` or `busy` the node takes no new grants: it cannot prove it is alive.
   */
  lock: SelfLock;
  /** This node's part in the Reconciler's leadership (`none`: no leader lock). */
  reconciler: LeaderState | 'none';
}

/** One boot as the admin view lists it. */
export interface RuntimeClusterNode extends ClusterNode {
  /** Running sessions whose row names this boot as owner. */
  sessionsOwned: number;
}

/**
 * The board port's shapes, under the names this API has always used: one
 * definition each, in `src/board/boardPort.ts`, which the runtime implements.
 */
export type RuntimeColumn = Column;
/** One card (task + its latest session): the board port's `BoardCard`. */
export type RuntimeCard = BoardCard;
/** Input of a new task: the board port's `CreateTaskInput`. */
export type RuntimeTaskInput = CreateTaskInput;
/** Pool occupancy: the board port's `PoolSnapshot`. */
export type RuntimePoolSnapshot = PoolSnapshot;
/** What `/metrics` exports: the board port's `BoardMetricsSnapshot`. */
export type RuntimeMetricsSnapshot = BoardMetricsSnapshot;

/** What `createTask` resolves to. */
export interface CreatedTask {
  task: Task;
  session: Session;
  /**
   * The RunnerPool's answer at creation (docs/runner-pool.md): 0 when the
   * session was granted a runner at once, else its 1-based place in the
   * pool's fair order (the order grants will really follow).
   */
  position: number;
  /**
   * The input's key named a task submitted before: this is that task and its
   * latest attempt (any status), nothing new was queued; `position` is its
   * place in line when queued, else 0.
   */
  replayed: boolean;
}

/**
 * A running node. Board commands take `actor` (the calling user, or `null`
 * for the admin); a task the actor may not see rejects as `not_found`.
 * Command failures reject with a `RuntimeCommandError` (codes `not_found`,
 * `conflict`, `invalid`, `unavailable`, the board port's); a read of the
 * rows the store did not answer, with `unavailable` (runtimeQueries.ts).
 */
export interface Runtime extends BoardSource, BoardCommands {
  /** `${nodeId}@${bootId}`: the owner this boot writes on the rows it claims. */
  readonly owner: string;
  /** The root supervisor: RunnerPool, TaskRunnerSupervisor, Reconciler (one_for_one). */
  readonly root: Supervisor;

  // ---- the board port (BoardSource + BoardCommands), and: ----------------
  /**
   * Someone looks at this board until the returned function is called
   * (docs/library.md, "Watching the board"). Optional on a board source,
   * always there on a runtime: an app calls `runtime.watch()` as it is.
   */
  watch(): () => void;
  /** The node's engine and store links, for /healthz and the board. */
  health(): RuntimeHealth;
  /**
   * Whether the node is ready for work, for GET /readyz: booted, taking
   * grants, its store answering `SELECT 1` within 1 s (on the runtime's
   * clock; probes share one query in flight, docs/operations.md), not
   * stopping. Never rejects.
   */
  readiness(): Promise<Readiness>;

  // ---- for applications and the harness -----------------------------------
  /** Like `createTask`, with the rows. */
  submit(userId: string, input: RuntimeTaskInput): Promise<CreatedTask>;
  /**
   * The output stored on one of `userId`'s finished sessions (whole up to
   * 16 MiB, a cut marked; docs/data.md), or null: none stored, or not theirs.
   */
  sessionOutput(userId: string, sessionId: string): Promise<SessionOutput | null>;
  /**
   * A task with every attempt for its job page, as `actor` (null: the admin)
   * may see it; null when there is none or it is another user's (the filter
   * is in the SQL). Reads the store; no deadline of its own beyond the pool's.
   */
  taskDetail(actor: string | null, taskId: string): Promise<TaskDetail | null>;
  /** The stored output of one attempt of `taskId`, as `actor` may see it; or null. */
  taskOutput(
    actor: string | null,
    taskId: string,
    sessionId: string,
  ): Promise<SessionOutput | null>;
  /**
   * One page of that output (src/db/outputPages.ts): reads the stored
   * pieces that hold the page, never the whole output; or null.
   */
  taskOutputPage(
    actor: string | null,
    taskId: string,
    sessionId: string,
    range: OutputPageRange,
  ): Promise<OutputPage | null>;
  /** That output whole, in parts of at most 1 MiB read one at a time; or null. */
  taskOutputBytes(
    actor: string | null,
    taskId: string,
    sessionId: string,
  ): Promise<AsyncIterable<Uint8Array> | null>;
  /**
   * Resolves with the first successful boot pass's report (the board
   * reloaded after it); a failed boot pass is retried by the Reconciler's
   * loop and this waits on. Rejects with `RuntimeStoppedError` if the tree
   * ends first. Has no deadline of its own: race it with one.
   */
  readonly booted: Promise<PassReport>;
  /**
   * Resolves once, when the tree has ended, saying why. `gave_up` means
   * nothing in the runtime runs any more (commands reject as `unavailable`).
   */
  readonly exited: Promise<RuntimeExit>;
  /** Runs one Reconciler pass now (the tick as an event) and resolves when it is done. */
  reconcile(): Promise<void>;
  /** Supervisor events of the whole tree, for the inspector. */
  onSupervisorEvent(listener: (event: SupervisorEvent) => void): () => void;
  /** Every boot with a heartbeat row, its lock, and the running sessions it owns (the admin view). */
  clusterNodes(): Promise<RuntimeClusterNode[]>;
  /** What `roundtable status` counts, read from the rows (GET /api/admin/status). */
  lineStatus(headSize: number): Promise<LineStatusRows>;
  /** The dashboard's per-minute series up to `at` (default: now), from the rows (GET /api/admin/activity). */
  activity(query: { minutes: number; at?: Date }): Promise<ActivityRows>;
  /** The last `limit` runs that ended, oldest first, from the rows (the start estimates' durations). */
  recentRuns(limit: number): Promise<RecentRun[]>;
  /** Session ids with a live TaskRunner in this boot. */
  liveRunners(): string[];
  /** I/O calls in flight right now (the harness waits for 0 to call the system settled). */
  busy(): number;
  /**
   * Stops the tree in reverse start order (Reconciler, heartbeat, runners,
   * pool), then deletes this boot's heartbeat row so other nodes adopt its
   * runs at once. Idempotent.
   */
  stop(): Promise<void>;
  /** Kills every actor at once with no cleanup, as a replaced app container would die. */
  kill(): void;
}

/** Stable codes of command failures: the board port's. */
export type RuntimeCommandErrorCode = BoardCommandErrorCode;

/**
 * The error every command rejects with: a subclass of the board port's
 * `BoardCommandError`, so the server maps `code` to its HTTP status by
 * `instanceof`, while `err.name` and stacks say the name the library
 * documents (an alias of the port's class said `BoardCommandError`).
 *
 * @example
 * ```ts
 * new RuntimeCommandError('conflict', 'task tsk_1 is running').name // => 'RuntimeCommandError'
 * new RuntimeCommandError('conflict', 'task tsk_1 is running') instanceof BoardCommandError // => true
 * ```
 */
export class RuntimeCommandError extends BoardCommandError {
  override readonly name: string = 'RuntimeCommandError';
}
