/**
 * The `ContainerBackend` port: everything roundtable knows about where runs
 * live. Implementations: Docker Swarm and plain Docker (`docker/`), a local
 * child process (`local/`), and an in-memory cluster (`simulated/`). One
 * contract suite (test/containers/contract.ts) runs against all of them.
 *
 * No third-party type crosses this port: results are plain data, failures are
 * `ContainerError`s with a stable `code`.
 */
import type { BackendKind, Presence } from '../machines/recoveryPolicy.js';
import type { ContainerError, ContainerErrorCode } from './ContainerError.js';

export type { BackendKind, Presence };

/** What to run for one session. `command` is an argv array, never a shell string. */
export interface RunSpec {
  /** Validated by `validateSessionId`; the only input names are derived from. */
  sessionId: string;
  image: string;
  command: readonly string[];
  env?: Readonly<Record<string, string>>;
  /** Free text (user, task title) goes here or in env, never into names. */
  labels?: Readonly<Record<string, string>>;
}

/** Identifies a run for every call after `start`. */
export interface RunRef {
  /** Service or container name (`rt-<sessionId>`), as recorded on the session row. */
  handle: string;
  sessionId: string;
}

export interface StartResult {
  handle: string;
  /** When the exec began: the instant `decide` compares container start times with. */
  startedAt: Date;
}

export interface AttachOptions {
  /** Live output, in order, as it arrives (stdout and stderr merged by the wrapper). */
  onOutput?: (chunk: string) => void;
  /** Stops waiting (rejects with code `aborted`); the run itself keeps going. */
  signal?: AbortSignal;
  /** Stops waiting after this long (rejects with code `timeout`); defaults per backend. */
  timeoutMs?: number;
}

/** How `follow` reads an adopted run's output file. */
export interface FollowOptions {
  /** The output, in order: what is there already (see `fromByte`), then each write. */
  onOutput: (chunk: string) => void;
  /**
   * Stops following. What was written up to then is read first (the file is
   * complete once the marker is there, so a follower stopped on the marker
   * has passed on the whole output).
   */
  signal: AbortSignal;
  /**
   * Where to start, in bytes: what this node showed of the run already. Left
   * out: the last `tailBytes` of the output so far, from its first whole line.
   */
  fromByte?: number;
  /** Most bytes of the output so far passed on at the start; at most the output limit. */
  tailBytes?: number;
  /**
   * Called once when the follow has stopped for good and passes on nothing
   * more: after a stop, once the read to the end is done (at once where the
   * file is local, after engine round trips where it is not); or on its own
   * when the run's container was replaced. A caller that must know whether
   * it saw everything up to the stop waits for this, not for the abort.
   */
  onEnd?: () => void;
}

export interface RunExit {
  exitCode: number;
}

/** The exit marker, present only once the output file is complete. */
export interface ExitMarker {
  exitCode: number;
}

/**
 * One look at a run. `presence` is about the handle (the service or container):
 * `unknown` whenever the engine could not answer, never `absent`.
 * `containerStartedAt` is null when no container is running right now or the
 * engine did not say; `marker` is null when absent or unreadable.
 */
export interface Observation {
  presence: Presence;
  containerStartedAt: Date | null;
  marker: ExitMarker | null;
  /** Why presence is `unknown`, for logs. */
  error?: ContainerError;
}

/** A run's complete output, or its last `limitBytes` with the cut marked. */
export interface RunOutput {
  text: string;
  /** Size of the whole output file. */
  totalBytes: number;
  /** True when the head of the output was dropped to fit the limit. */
  truncated: boolean;
}

export interface RepinResult extends RunRef {
  previousImage: string;
}

/**
 * Whether the engine answers right now. `code` is `unavailable` or `timeout`
 * for an engine that cannot be reached; the runtime shows it on the board and
 * holds starts until a ping is `ok` again.
 */
export type PingResult = { ok: true } | { ok: false; code: ContainerErrorCode; message: string };

/**
 * Everything the runtime asks of the place where runs live. Every method has
 * a deadline and rejects only with `ContainerError` (observe never rejects).
 */
export interface ContainerBackend {
  readonly kind: BackendKind;
  /**
   * False for a backend whose runs die with the process that started them:
   * never adopted. Every built-in backend is adoptable (local included).
   */
  readonly adoptable: boolean;
  /**
   * The deployment this backend belongs to (`roundtable.namespace` label):
   * `listHandles` and `repin` see only this namespace's runs, so deployments
   * sharing an engine never sweep or re-pin each other's.
   */
  readonly namespace: string;

  /**
   * Creates the session's service or container and starts the command through
   * the wrapper. A failure says whose it is: `unavailable` or `timeout` (the
   * engine cannot be reached or did not answer: try again later), `rejected`
   * (the engine refused this spec, e.g. no such image: the message is the
   * engine's reason), `invalid_argument` (refused before the engine was asked).
   */
  start(spec: RunSpec): Promise<StartResult>;
  /** Live output and exit of a run this instance started; `not_attached` otherwise. */
  attach(ref: RunRef, options?: AttachOptions): Promise<RunExit>;
  /**
   * Live output of a run this instance did not start (an adopted one, or
   * one whose attach broke), read from its output file as it grows.
   * Never throws; a file that is not there yet is waited for. It goes on
   * until `signal` aborts (the marker does not stop it: the caller does),
   * or until the run's container is replaced or its file lost, and says
   * when it passed on its last chunk through `onEnd`. Every built-in
   * backend has it; optional for others: without it an adopted run's
   * output is shown when it ends.
   */
  follow?(ref: RunRef, options: FollowOptions): void;
  /**
   * The handle `start` gives (or gave) the session's run, known from the
   * session id alone: how a run is found again when its owner died between
   * `start` and recording the handle on the row. Null when this backend
   * cannot know it (a local run started from another data directory).
   */
  handleOf(sessionId: string): string | null;
  /** Presence, current container start time and exit marker; never throws. */
  observe(ref: RunRef): Promise<Observation>;
  /** The run's output file, whole up to `OUTPUT_LIMIT_BYTES`. */
  readOutput(ref: RunRef): Promise<RunOutput>;
  /** Removes the service or container; removing an absent one succeeds. */
  remove(ref: RunRef): Promise<void>;
  /** Every run of this namespace (by both labels), for the stale-handle sweep. */
  listHandles(): Promise<RunRef[]>;
  /** Moves every run of this namespace not on `image` onto it, replacing their containers. */
  repin(image: string): Promise<RepinResult[]>;
  /** One cheap engine round trip, bounded by the call deadline; never throws. */
  ping(): Promise<PingResult>;
}
