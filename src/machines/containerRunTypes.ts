/**
 * The contract of the ContainerRun statechart: its input, output, events, the
 * I/O actions it expects to be provided, its typed error, and the two pure
 * helpers it leans on (input validation and reading the actor system's clock).
 *
 * Kept apart from the machine so callers (TaskRunner, Reconciler, fakes in
 * tests) can import the types without pulling in the chart itself.
 */
import type { GiveUpReason, MaybeTimestamp } from './adoptPolicy.js';

/** How the run is attached to: we started the exec, or we inherited it after a restart. */
export type ContainerRunMode = 'owner' | 'adopt';

/** Input of `containerRunMachine`. */
export interface ContainerRunInput {
  sessionId: string;
  mode: ContainerRunMode;
  /**
   * The service or container the run lives in. Required to adopt (there is no
   * start step to learn it from); ignored by the owner path, which learns it
   * from `startRun`.
   */
  handle?: string | null;
  /**
   * When the session's exec started. The adopt path compares it with the
   * container's start time; the owner path learns it from `startRun`.
   */
  sessionStartedAt?: MaybeTimestamp;
  /** Delay between two observations of an adopted run. */
  pollMs: number;
  /** Wall-clock budget of an adoption, counted from the moment it began. */
  budgetMs: number;
  /**
   * Deadline of every single I/O call (`startRun`, `observe`, `readOutput`);
   * the attached exec itself has none here (see docs/container-run.md).
   * Defaults to `DEFAULT_IO_TIMEOUT_MS`.
   */
  ioTimeoutMs?: number;
}

/** Default deadline of one I/O call, generous enough for a Swarm service create. */
export const DEFAULT_IO_TIMEOUT_MS = 120_000;

/** What one look at an adopted container found. */
export interface Observation {
  /** The container's current start time; `null` when Docker did not say. */
  containerStartedAt: MaybeTimestamp;
  /** The exit marker, present only once the wrapper finished the command. */
  marker: { exitCode: number } | null;
  /**
   * The engine said definitely that the run's service or container does not
   * exist any more (`presence: 'absent'`): nothing is left to poll.
   */
  gone?: boolean;
}

/** Stable codes of the ways a run can fail (as opposed to exit or give up). */
export type ContainerRunErrorCode =
  | 'START_FAILED'
  | 'START_TIMED_OUT'
  | 'READ_OUTPUT_FAILED'
  | 'READ_OUTPUT_TIMED_OUT'
  | 'INVALID_INPUT'
  | 'ACTOR_NOT_PROVIDED';

/** A run that could not be started or whose output could not be read. Keeps the I/O `cause`. */
export class ContainerRunError extends Error {
  override readonly name = 'ContainerRunError';
  readonly code: ContainerRunErrorCode;

  constructor(code: ContainerRunErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

/**
 * The machine's final output. `failed` carries the exit code when the run is
 * known to have finished but its output could not be read, so the caller can
 * still record how the command ended.
 */
export type ContainerRunOutput =
  | { outcome: 'exited'; exitCode: number; output: string }
  | { outcome: 'gave_up'; reason: GiveUpReason }
  | { outcome: 'failed'; error: ContainerRunError; exitCode: number | null };

/**
 * What the exec stream tells the machine once `attach` began: output chunks,
 * then the exit code, or that the stream broke (the command may still run).
 */
export type AttachEvent =
  | { type: 'roundtable.run.output'; chunk: string }
  | { type: 'roundtable.run.exited'; exitCode: number }
  | { type: 'roundtable.run.attach.error'; error: unknown };

/**
 * The answers of the machine's I/O, sent to it by whoever performs the I/O
 * its actions ask for (src/actors/taskRunner.ts, or a test). A look carries
 * the `seq` its request was made with: a look that timed out and answers
 * late is not taken for the next one.
 */
export type ContainerRunIoEvent =
  | { type: 'roundtable.run.startRun.done'; output: StartedRun }
  | { type: 'roundtable.run.startRun.error'; error: unknown }
  | { type: 'roundtable.run.observe.done'; seq: number; output: Observation }
  | { type: 'roundtable.run.observe.error'; seq: number; error: unknown }
  | { type: 'roundtable.run.readOutput.done'; output: string }
  | { type: 'roundtable.run.readOutput.error'; error: unknown };

/** Everything the machine can receive from outside: its I/O's answers. */
export type ContainerRunEvent = AttachEvent | ContainerRunIoEvent;

/** Emitted for each output chunk of an owned run; subscribe with `actor.on('roundtable.run.output', fn)`. */
export type ContainerRunEmitted = {
  type: 'roundtable.run.output';
  sessionId: string;
  chunk: string;
};

/** What the `startRun` action is asked with; it answers once the exec is running. */
export interface StartRunInput {
  sessionId: string;
}
/** What `startRun` answers: where the run lives and when its exec started. */
export interface StartedRun {
  handle: string;
  startedAt: MaybeTimestamp;
}
/** What the `attach`, `observe` and `readOutput` actions are asked with. */
export interface RunRef {
  sessionId: string;
  handle: string;
}
/** A look at an adopted run: its `seq` comes back with the answer. */
export interface ObserveRequest extends RunRef {
  seq: number;
}

// Module functions, not closures: an input is checked once per run, on the hot path.
function bad(field: string, why: string): never {
  throw new ContainerRunError('INVALID_INPUT', `containerRun: ${field} ${why}`);
}

function positive(field: 'pollMs' | 'budgetMs' | 'ioTimeoutMs', value: number): void {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    bad(field, `must be a finite number > 0, got ${String(value)}`);
  }
}

/**
 * Checks an input before anything starts; throws a `ContainerRunError` with
 * code `INVALID_INPUT` naming the bad field.
 *
 * @example
 * ```ts
 * validateContainerRunInput({ sessionId: 's1', mode: 'owner', pollMs: 1000, budgetMs: 900000 }).ioTimeoutMs // => 120000
 * validateContainerRunInput({ sessionId: 's1', mode: 'adopt', handle: 'svc-s1', pollMs: 1000, budgetMs: 900000 }).handle // => 'svc-s1'
 * validateContainerRunInput({ sessionId: 's1', mode: 'adopt', pollMs: 1000, budgetMs: 900000 }) // throws INVALID_INPUT
 * validateContainerRunInput({ sessionId: 's1', mode: 'owner', pollMs: 0, budgetMs: 900000 }) // throws INVALID_INPUT
 * validateContainerRunInput({ sessionId: '', mode: 'owner', pollMs: 1, budgetMs: 1 }) // throws INVALID_INPUT
 * ```
 */
export function validateContainerRunInput(
  input: ContainerRunInput,
): Required<Omit<ContainerRunInput, 'sessionStartedAt'>> & { sessionStartedAt: MaybeTimestamp } {
  if (typeof input.sessionId !== 'string' || input.sessionId === '') bad('sessionId', 'is empty');
  if (input.mode !== 'owner' && input.mode !== 'adopt') bad('mode', "must be 'owner' or 'adopt'");
  positive('pollMs', input.pollMs);
  positive('budgetMs', input.budgetMs);
  const ioTimeoutMs = input.ioTimeoutMs ?? DEFAULT_IO_TIMEOUT_MS;
  positive('ioTimeoutMs', ioTimeoutMs);
  const handle = input.handle ?? null;
  if (input.mode === 'adopt' && (handle === null || handle === '')) {
    bad('handle', 'is required to adopt a run');
  }
  return {
    sessionId: input.sessionId,
    mode: input.mode,
    handle,
    sessionStartedAt: input.sessionStartedAt ?? null,
    pollMs: input.pollMs,
    budgetMs: input.budgetMs,
    ioTimeoutMs,
  };
}

/**
 * Reads "now" from an actor system's clock. xstate's `Clock` only promises
 * `setTimeout`/`clearTimeout`; a clock that also has `now()` (its
 * `SimulatedClock` does, and so can any injected clock) is the time source,
 * so budgets and `after` delays run on one clock. xstate's default clock is
 * the real `setTimeout`, which `Date.now()` matches.
 *
 * @example
 * ```ts
 * clockNow({ now: () => 42, setTimeout: () => 0, clearTimeout: () => {} }) // => 42
 * typeof clockNow({ setTimeout: () => 0, clearTimeout: () => {} }) // => 'number'
 * ```
 */
export function clockNow(clock: object): number {
  const now: unknown = (clock as { now?: unknown }).now;
  if (typeof now === 'function') {
    const value: unknown = now.call(clock);
    if (typeof value === 'number' && Number.isFinite(value)) return value;
  }
  return Date.now();
}
