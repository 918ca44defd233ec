/**
 * What the simulation harness (src/testing/createTestRuntime.ts) takes and
 * hands back, and the errors it throws of its own.
 */
import type { PGlite } from '@electric-sql/pglite';
import type { OwnerLiveness, Runtime, RuntimeCaps, RuntimeCard } from '../actors/runtimeTypes.js';
import type { SimCommandRegistry } from '../containers/simulated/commands.js';
import type { ExecRecord, SimulatedCluster } from '../containers/simulated/SimulatedCluster.js';
import type { Db, Session, SessionEvent, Task } from '../db/index.js';
import type { AddNodeOptions } from './harnessNodes.js';
import type { TestClock } from './TestClock.js';

export interface TestRuntimeOptions {
  caps?: RuntimeCaps;
  pollMs?: number;
  adoptBudgetMs?: number;
  reconcileMs?: number;
  nodes?: readonly string[];
  rescheduleDelayMs?: number;
  commands?: SimCommandRegistry;
  runnerImage?: string;
  /**
   * Share one PGlite per test file; its tables are emptied first. Without
   * one (and without `db`) the harness opens its own (`migratedPglite`).
   */
  pglite?: PGlite;
  /**
   * Run on this database instead of PGlite (e.g. a pool on a Postgres
   * server), migrated here if needed; its tables are emptied first and the
   * harness never closes it. Takes precedence over `pglite`.
   */
  db?: Db;
  /** The node name written in owners. Default 'test-node'. */
  nodeId?: string;
  /** Passed to `createRuntime`: the advisory lock around passes (needs a server pool). */
  reconcileLock?: boolean;
  /** Passed to `createRuntime`: who else is alive (several nodes on one database). */
  liveness?: OwnerLiveness;
  /**
   * Real time one settle may wait for I/O in flight before calling it a
   * hang: a server answers over a socket, not on the next turn of the loop.
   * Default 30 000.
   */
  settleTimeoutMs?: number;
  /** Passed to `createRuntime`: the fallback poll of other nodes' ticks. */
  dispatchPollMs?: number;
  /** Passed to `createRuntime`: this node's share of the global cap. */
  localMax?: number;
  /** Passed to `createRuntime`: how long finished work is kept (`null`: for ever). */
  retentionMs?: number | null;
  /** Passed to `createRuntime`: the time limit of a task submitted without one. */
  defaultTimeLimitMs?: number | null;
  /** Errors the runtime reports; default: collected in `errors`. */
  onError?: (error: unknown) => void;
}

export interface TestRuntime {
  readonly clock: TestClock;
  readonly cluster: SimulatedCluster;
  /** The current boot; replaced by `deploy()`. */
  readonly runtime: Runtime;
  readonly boots: number;
  /** Errors the runtime reported (not thrown to anyone). */
  readonly errors: unknown[];
  /**
   * Moves virtual time by `ms`, firing timers in order and settling after
   * each. Calls of `advance` and `deploy` run one after the other in the
   * order they were made, awaited or not; after `close()` they reject with
   * `HarnessClosedError`. An `ms` that is not a finite number >= 0 rejects
   * with a `HarnessArgumentError` and moves nothing.
   */
  advance(ms: number): Promise<void>;
  /** Waits until no actor has I/O in flight. */
  settle(): Promise<void>;
  /** Kills every actor with no cleanup and boots a fresh runtime on the same store and cluster. */
  deploy(options?: { runnerImage?: string }): Promise<Runtime>;
  /**
   * Boots another node on the same store, cluster and clock (a replica
   * behind the load balancer, the new side of a rolling deploy), with the
   * harness's options but `options`'. `advance` and `settle` wait on it as
   * on the harness's own boot, and `close` kills it; kill it yourself
   * (`node.kill()`) for a replica that dies. In turn with `advance` and
   * `deploy`; after `close()` it rejects with `HarnessClosedError`.
   */
  addNode(options: AddNodeOptions): Promise<Runtime>;
  /** The nodes `addNode` booted, killed ones too, in the order they were added. */
  readonly nodes: readonly Runtime[];
  /**
   * Rows, for assertions: sessions in the order they were queued, tasks in
   * the order they were submitted (rows of one instant in tick order).
   * After `close()` they reject with `HarnessClosedError`.
   */
  sessions(): Promise<Session[]>;
  tasks(): Promise<Task[]>;
  events(sessionId: string): Promise<SessionEvent[]>;
  /**
   * The current boot's cards, in the order `tasks()` lists their tasks as of
   * the last `advance`, `settle` or `deploy` (a newer card comes last; while
   * the store is down on purpose the order read before it stands).
   */
  board(): RuntimeCard[];
  /**
   * Every execution (of `sessionId`'s run, if given). A task's id throws a
   * `HarnessArgumentError`: it matches no run, so a check on it passed on nothing.
   */
  execLog(sessionId?: string): ExecRecord[];
  /** Kills the node and closes what the harness opened; idempotent. */
  close(): Promise<void>;
}

/**
 * The system did not settle: I/O stayed in flight past the rounds and the
 * real-time deadline (`settleTimeoutMs`). `inFlight` is how many calls were.
 */
export class HarnessSettleError extends Error {
  override readonly name = 'HarnessSettleError';
  readonly code = 'HARNESS_NOT_SETTLED';
  constructor(readonly inFlight: number) {
    super(
      `harness: the runtime did not settle (${inFlight} I/O calls in flight); ` +
        'a call that waits on virtual time ends only when the clock moves',
    );
  }
}

/**
 * `advance()`, `deploy()`, `sessions()`, `tasks()` or `events()` after
 * `close()`: the node is dead and the harness's store handle closed, so
 * there is no time to move, nothing to boot on and no rows to read.
 */
export class HarnessClosedError extends Error {
  override readonly name = 'HarnessClosedError';
  readonly code = 'HARNESS_CLOSED';
  constructor(readonly operation: string) {
    super(`harness: ${operation}() after close()`);
  }
}
