/**
 * What a TaskRunner is handed (the runtime's ports: rows, slots, the
 * container backend) and what one run of it keeps between its steps. The
 * logic that uses them is src/actors/taskRunner.ts; the container-run half
 * is src/actors/runnerContainerRun.ts, the output streams
 * src/actors/runnerStreams.ts.
 */
import type { ContainerBackend, RunOutput } from '../containers/ContainerBackend.js';
import type { Db, Session, Task } from '../db/index.js';
import type { TickFinish, TickHandle, TickOutcome } from '../db/tickTypes.js';
import type { ContainerRunError } from '../machines/containerRunTypes.js';
import type { Watchable } from '../supervisor/watchExit.js';
import type { DispatchClock } from './dispatcher.js';
import type { StartFailure } from './runnerFinish.js';

/** The node's slots as a runner sees them: writes through the next tick, and the held slot. */
export interface RunnerSlots {
  submit(op: Omit<TickHandle, 'ref'> | Omit<TickFinish, 'ref'>): Promise<TickOutcome>;
  /** This runner holds `sessionId` at `epoch` (monitored: its DOWN releases the slot). */
  hold(sessionId: string, epoch: number, holder: Watchable): void;
  /** Done with it. Idempotent. */
  release(sessionId: string): void;
}

/** Everything a TaskRunner touches, handed in by the runtime. */
export interface TaskRunnerDeps {
  db: Db;
  backend: ContainerBackend;
  slots: RunnerSlots;
  /** The owner this boot writes on rows. */
  owner: string;
  clock: DispatchClock;
  isTransient(error: unknown): boolean;
  /** How long a runner keeps trying a read or a write while the store is down. */
  storeDeadlineMs: number;
  /** Live output of a run this boot started. */
  onOutput(sessionId: string, chunk: string): void;
  /**
   * A write returned this task's new rows: the board shows them with no read.
   * `outputShown`: the run's whole output went through `onOutput` already.
   */
  onRows(session: Session, task?: Task | null, outputShown?: boolean): void;
  /** The rows a tick granted this session with, taken once; else undefined (a restart, an adoption). */
  grantOf(sessionId: string): { session: Session; task: Task; limitMs?: number | null } | undefined;
  /**
   * The row the Reconciler already fenced for this boot (a batched adopt),
   * taken once: the runner goes on from it with no read and no CAS of its own.
   */
  fencedOf?(sessionId: string): { session: Session; limitMs: number | null } | undefined;
  /**
   * Whether this boot may fence the owner now on `session`'s row: its own
   * row, or an owner the liveness decision says is gone. Default: yes.
   */
  mayAdopt?(session: Session): Promise<boolean>;
  /** A start that failed: what to do with the session (and tells the runtime the engine may be down). */
  onStartFailure(error: ContainerRunError, session: Session): StartFailure;
  /** A give-up or a start failure queued a new attempt (counted for /metrics). */
  onRequeued(reason: string): void;
  /** A run was failed at its time limit (counted for /metrics as a give-up, `timed_out`). */
  onTimedOut?(): void;
  /** Errors that must be seen but must not crash the runner (a failed removal). */
  onError(error: unknown): void;
  /** Counts in-flight I/O, so the harness knows when the system is settled. */
  track<T>(work: Promise<T>): Promise<T>;
}

/** One run of this boot: what its runner's steps learned, from its first step to its end. */
export interface RunState {
  sessionId: string;
  /**
   * Aborted when the runner ends in any way (done, stopped, crashed) or is
   * cancelled: its I/O in flight is abandoned (retries stop, the exec
   * stream is closed, an adopt CAS that lands late holds nothing).
   */
  abort: AbortController;
  /**
   * The row as this boot's grant, adopt or write returned it. Only a write
   * of ours moves a row we own on (every later write is fenced by its
   * epoch), so reading it back would only tell us what we know.
   */
  row: Session | undefined;
  /** The granted task: the run spec. */
  spec: Task | undefined;
  /** A row the Reconciler fenced for this boot, from `loadRow` to the adopt step. */
  prefenced: Session | undefined;
  /** Where the run lives, once started (the handle op may still be on its way). */
  handle: string | null;
  /**
   * Characters of the output this boot already streamed to the board. An
   * adopted run streamed none here: finalize hands the board the rest of
   * the complete output it read.
   */
  streamed: number;
  /** The same in bytes of the output file: where a follow after a broken attach goes on. */
  streamedBytes: number;
  /** Stops the follow of an adopted run's output (reading to the end first), while one runs. */
  unfollow: (() => void) | null;
  /**
   * A follow passed the output on to the board up to its stop (on the
   * marker: all of it), so finalize hands it none again.
   */
  followed: boolean;
  /**
   * A stopped follow still reading to the end (an engine's file is read
   * through round trips after the stop): finalize waits for it, bounded
   * (`settleFollow`), so the card gets the run's last lines.
   */
  followEnd: { done: Promise<void>; cut: () => void } | null;
  /** The output finalize stores on the row (as the backend read it, uncut by us). */
  output: RunOutput | undefined;
  /**
   * The task's time limit as the grant or the Reconciler's batch said (null:
   * none); undefined when nobody told this incarnation (a runner restarted
   * after a crash), which then reads it.
   */
  limitMs: number | null | undefined;
  /** Clears the run's time-limit timer (src/actors/runTimeLimit.ts), while one is set. */
  disarmLimit: (() => void) | null;
}

/** A fresh run of `sessionId`: nothing learned yet. */
export function newRun(sessionId: string): RunState {
  return {
    sessionId,
    abort: new AbortController(),
    row: undefined,
    spec: undefined,
    prefenced: undefined,
    handle: null,
    streamed: 0,
    streamedBytes: 0,
    unfollow: null,
    followed: false,
    followEnd: null,
    output: undefined,
    limitMs: undefined,
    disarmLimit: null,
  };
}

/** Throws when the run was abandoned meanwhile: a stopped or cancelled runner writes nothing more. */
export function alive(signal: AbortSignal): void {
  if (signal.aborted) throw new Error('taskRunner stopped');
}

/**
 * Why a run's I/O was abandoned. One shared reason: `abort()` with none
 * builds a DOMException with a stack trace, once per job.
 */
export const RUN_ENDED = new Error('taskRunner: the run ended');

/** Something that takes a chart's events (the `self` of a provided action). */
export interface EventTarget<E> {
  send(event: E): void;
  getSnapshot(): { status: string };
}

/** Tells `to`, unless it stopped meanwhile (its late answers are nobody's). */
export function tell<E>(to: EventTarget<E>, event: E): void {
  if (to.getSnapshot().status === 'active') to.send(event);
}

/** Runs one I/O call (counted in flight by `track`) and tells `to` how it went. */
export function answerWith(track: TaskRunnerDeps['track']) {
  return <T, E>(
    to: EventTarget<E>,
    work: () => Promise<T>,
    done: (output: T) => E,
    failed: (error: unknown) => E,
  ): void => {
    void track(Promise.resolve().then(work)).then(
      (output) => tell(to, done(output)),
      (error: unknown) => tell(to, failed(error)),
    );
  };
}
