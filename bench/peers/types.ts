/**
 * The port every compared system implements. One adapter per system under
 * `systems/`; the scenarios only ever see this interface, so each system runs
 * exactly the same workload.
 */
import type { QueryProfile } from './queryProfile.js';

/** How a worker process runs the jobs it takes. */
export interface WorkerMode {
  /** Most jobs the worker process runs at once (the global limit, one process). */
  concurrency: number;
  /** `noop` returns at once; `hold` never returns (the recovery test kills it). */
  job: 'noop' | 'hold';
  /**
   * Which worker of a recovery test this is: the one that is killed or the
   * one that takes over (roundtable gives them different node ids).
   */
  role?: 'primary' | 'standby';
}

/** The enqueueing side, opened in the bench process. */
export interface QueueClient {
  /** Enqueues one job per key, in one call where the system has a bulk insert. */
  enqueueMany(keys: readonly string[]): Promise<void>;
  /** Enqueues one job the way an application would for a single request. */
  enqueueOne(key: string): Promise<void>;
  /** Jobs neither completed nor failed for good. */
  pending(): Promise<number>;
  /** Keys of jobs that the system has marked failed for good. */
  failedKeys(): Promise<string[]>;
  /**
   * After a recovery test: when the steps of the recovery happened, in ms
   * after `killedAt` (read from the system's own rows), for the report.
   */
  recoveryTimeline?(
    killedAt: Date,
    deadWorkerIds: readonly string[],
  ): Promise<Record<string, number>>;
  close(): Promise<void>;
}

/** A running worker, in whatever process called `startWorker`. */
export interface WorkerHandle {
  /** Identifiers the system gave this worker (used by recovery hooks). */
  ids: string[];
  /**
   * Enqueues in the worker's own process, for a system whose jobs are
   * submitted through the worker (roundtable: an application calls
   * `runtime.submit` in the node process). The bench forwards over IPC.
   */
  enqueue?(keys: readonly string[]): Promise<void>;
  /** CPU used so far by node processes this worker started (the 3-node variant's B and C). */
  childCpu?(): Promise<NodeJS.CpuUsage>;
  /** After `stop`: the statements those processes sent. */
  childProfiles?(): QueryProfile[];
  stop(): Promise<void>;
}

/** The scenarios run.ts knows; a system may take part in some only. */
export type ScenarioName = 'throughput' | 'latency' | 'recovery';

/** What a system's documentation says about a worker that dies mid-job. */
export interface RecoveryDoc {
  /** The documented default and how long it would take. */
  defaultBehaviour: string;
  /** The settings this bench runs the recovery test with, and why. */
  measuredWith: string;
}

export interface BenchSystem {
  /** Stable name, also the key the worker child process looks adapters up by. */
  readonly name: string;
  /** What the report calls it (defaults to `name`). */
  readonly label?: string;
  /** Scenarios this system takes part in (default: all). */
  readonly scenarios?: readonly ScenarioName[];
  /**
   * Jobs are enqueued through the worker process (`WorkerHandle.enqueue`),
   * not through `client()`; `client()` then only reads progress.
   */
  readonly enqueuesInWorker?: boolean;
  /**
   * When the recovery test starts the standby: `before_kill` (a second node,
   * already up) or `after_kill` (the same node restarted, as a deploy does).
   * Default `before_kill`.
   */
  readonly recoveryStandby?: 'before_kill' | 'after_kill';
  /** Package name and exact version. */
  readonly version: string;
  /** Settings used, as shown in the report. */
  readonly settings: Readonly<Record<string, string>>;
  readonly recovery: RecoveryDoc;
  /** Why the recovery test cannot run for this system yet, if it cannot. */
  readonly recoveryUnavailable?: string;
  /**
   * Installs the schema into an empty database and closes its connections.
   * `recovery` selects the recovery test's queue settings where those live
   * in the schema rather than in the worker.
   */
  setup(url: string, opts: { recovery: boolean }): Promise<void>;
  client(url: string): Promise<QueueClient>;
  /**
   * Starts a worker. `onStart` is called with the job's key as the handler
   * begins, before any work; `recovery` switches to the recovery settings.
   */
  startWorker(
    url: string,
    mode: WorkerMode & { recovery: boolean },
    onStart: (key: string) => void,
  ): Promise<WorkerHandle>;
  /**
   * What the system's docs tell a supervisor to do when it sees a worker
   * process die (for example graphile-worker's `forceUnlockWorkers`).
   * Absent when the system recovers on its own.
   */
  onWorkerDeath?(url: string, deadWorkerIds: readonly string[]): Promise<void>;
}

/** A system the bench knows about but cannot measure in this checkout. */
export interface UnavailableSystem {
  readonly name: string;
  readonly unavailable: string;
}
