/**
 * The contract of one dispatch tick (`tick(db, input)` in tick.ts, the SQL
 * function `rt_tick` of migration 4): every write a node gathered since its
 * last tick (enqueues, retries, handles, finishes, cancels, cap changes) and
 * the grants it wants, applied in one statement under one advisory lock, in
 * one commit. The database decides every grant for every node at once, so
 * caps are exact and the round-robin order is one order across nodes
 * (docs/runner-pool.md, docs/data.md).
 *
 * Each op carries a caller-chosen `ref` (unique within the tick) and gets
 * exactly one outcome with that ref. An op that loses its compare-and-set is
 * a `stale` outcome for that caller only; the rest of the batch commits.
 * Ops are idempotent: a tick retried after its reply was lost (the commit
 * happened, the connection died) answers the same outcomes, never a
 * duplicate row nor a stale for a write that did happen.
 */
import type { BackendKind } from './schema.js';

/** A new task and its first attempt, queued at the back of its user's line. */
export interface TickEnqueue {
  op: 'enqueue';
  ref: string;
  taskId: string;
  sessionId: string;
  userId: string;
  title: string;
  /** The run spec as validated by `parseRunSpec` (image, command, env). */
  spec: { image: string; command: readonly string[]; env?: Readonly<Record<string, string>> };
  /** The new card's column; default 'queued'. */
  column?: string;
  /**
   * The caller's idempotency key (`submitKey`, unique per user): when a task
   * of this user already has it, nothing is queued and the outcome is that
   * task's latest attempt, `replayed`, or `stale` with `key in use by
   * <task id>` when that task was submitted with another title or spec.
   */
  key?: string;
  /** How long a run of the task may hold its runner, in ms (`timeLimitMs`); absent: no limit. */
  timeLimitMs?: number;
}

/** A board retry: a new attempt of a finished task, at the back of its user's line. */
export interface TickRetry {
  op: 'retry';
  ref: string;
  taskId: string;
  /** The user the caller acts for; null: an admin (any user's task). */
  actor: string | null;
  /** The new attempt's id. */
  sessionId: string;
  /** The latest attempt as the caller read it: the compare-and-set. */
  expected: { sessionId: string; status: 'failed' | 'cancelled'; epoch: number };
  /** The card's column after the retry; default 'queued'. */
  column?: string;
}

/** Where a running session lives, fenced on (running, epoch). No count changes. */
export interface TickHandle {
  op: 'handle';
  ref: string;
  sessionId: string;
  epoch: number;
  backend: BackendKind;
  handle: string;
  /** When the exec started, once known (the adopt policy compares it). */
  startedAt: Date | null;
}

/** The end of a run: running@epoch -> succeeded | failed, its output, its card's column. */
export interface TickFinish {
  op: 'finish';
  ref: string;
  sessionId: string;
  epoch: number;
  status: 'succeeded' | 'failed';
  exitCode: number | null;
  /** Required when failed; null when succeeded. */
  reason: string | null;
  userRecoverable: boolean;
  /** The output to store with it (session_outputs); null: none (a give-up). */
  output: { text: string; totalBytes: number; truncated: boolean } | null;
  /** The card's column after the finish (ignored when `requeue` is set: 'queued'). */
  column: string;
  /**
   * The infrastructure ended the run (container_replaced, owner_lost, a
   * re-pin, an engine outage): queue attempt + 1 with this id at the HEAD of
   * its user's line, in the same commit.
   */
  requeue: { sessionId: string } | null;
}

/** queued | running @epoch -> cancelled; a queued session's later turns move up one. */
export interface TickCancel {
  op: 'cancel';
  ref: string;
  sessionId: string;
  expected: { status: 'queued' | 'running'; epoch: number };
  reason: string;
  /** The card's column after the cancel. */
  column: string;
}

/** A per-user cap override (written to user_caps), or its removal (null). */
export interface TickCap {
  op: 'cap';
  ref: string;
  userId: string;
  maxRunning: number | null;
}

export type TickOp = TickEnqueue | TickRetry | TickHandle | TickFinish | TickCancel | TickCap;

export interface TickInput {
  /** The node boot granted sessions are given to (owner_node). */
  owner: string;
  now: Date;
  /** Cluster caps as this node is configured: most running at once, and a user's cap with no override. */
  globalCap: number;
  defaultUserCap: number;
  /** Most sessions to grant to `owner` in this tick (its free local capacity); 0: none. */
  want: number;
  /**
   * Applied in this order, whatever the array order: cap, handle, finish,
   * cancel, retry, enqueue; then the grants. Within one kind, array order.
   */
  ops: readonly TickOp[];
  /**
   * The previous tick's reply was lost (its outcome is unknown): also list
   * every session running under `owner`, so grants that committed unseen
   * get their runner.
   */
  resync?: boolean;
  /**
   * The last tick the caller has every change of: when other ticks came
   * after it, the reply carries what they changed (`changes`, and `lines`
   * since it), so the caller needs no read of its own for them.
   */
  since?: number;
  /** With `since`: each finished session in `changes` carries this many characters of its stored output's end. */
  tailChars?: number;
  /**
   * With `since`: when more sessions than this changed after it, the reply
   * carries none of them and says so (`changesDeferred`); the caller reads
   * them apart, off the lock the tick holds. Absent: all of them ride.
   */
  changesMax?: number;
}

/** A session row as the tick returns it (the same fields as `Session` in rows.ts). */
export type { Session as TickSession, Task as TickTask } from './rows.js';

import type { Session, Task, TaskSummary } from './rows.js';

/** One op's outcome. */
export type TickOutcome =
  /** Applied (or found already applied). `position`: for a queued session, its 1-based place in the global order after this tick; 0 when granted in this tick. */
  | {
      ref: string;
      kind: 'applied';
      session: Session;
      task: Task | null;
      position: number | null;
      /** finish with requeue: the new attempt. */
      next?: { session: Session; position: number };
      /** An enqueue whose key named a task submitted before: that task, nothing new queued. */
      replayed?: true;
    }
  /** The compare-and-set found another status or epoch. */
  | { ref: string; kind: 'stale'; actual: { status: string; epoch: number } }
  /** No such session or task (or not the actor's). */
  | { ref: string; kind: 'not_found' }
  /** A cap op, applied: the user's line with its new cap (a cap op has no session). */
  | { ref: string; kind: 'cap'; line: UserLine };

/** A queued line as the tick left it: what positions are computed from. */
export interface UserLine {
  userId: string;
  /** Turn of the user's first queued session. */
  headTurn: number;
  queued: number;
  running: number;
  joinSeq: number;
  /** The user's effective cap (their override, else the default). */
  maxRunning: number;
  /** Whether `maxRunning` is a `user_caps` override. */
  hasOverride: boolean;
}

export interface TickResult {
  /** The tick's number (dispatch_state.tick after it); unchanged when nothing changed. */
  tick: number;
  /**
   * Whether this tick wrote anything. When it did not, `tick` is the current
   * number, which may be another node's tick (the feed must read it).
   */
  changed: boolean;
  /** One per op, with the op's `ref`; `tick()` returns them in op order. */
  outcomes: TickOutcome[];
  /** Sessions granted to `owner` in this tick, in grant order, with their tasks (the spec to run). */
  granted: { session: Session; task: Task; limitMs?: number | null }[];
  /** With `resync`: every session running under `owner`. */
  owned?: { session: Session; task: Task; limitMs?: number | null }[];
  /** Running sessions and room over every node after this tick. */
  running: number;
  /**
   * Lines this tick changed (for the board's positions); with `changes`,
   * every line a tick after `since` changed.
   */
  lines: UserLine[];
  /**
   * Asked with `since` and other ticks came after it: the latest attempt of
   * every task those ticks (up to this one, not included) touched, as the
   * feed's read returns them. Absent: nothing to tell (or not asked).
   */
  changes?: ChangedSession[];
  /**
   * Asked with `changesMax` and more sessions than that changed after
   * `since`: none of them rode along (nor `changes`); read them apart.
   */
  changesDeferred?: true;
}

/** The last characters of a stored output, and whether they are all of it. */
export interface StoredTail {
  tail: string;
  whole: boolean;
}

/** A changed session as the feed and the tick's `changes` return it (src/db/sql/changesSql.ts). */
export interface ChangedSession {
  session: Session;
  /** Without its run spec: nobody who reads changes runs them. */
  task: TaskSummary;
  /** Asked for with a tail size, on a finished attempt: its stored tail, or null (none stored). */
  output?: StoredTail | null;
}
