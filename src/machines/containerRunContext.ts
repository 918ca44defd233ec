/**
 * The ContainerRun chart's context and the pure helpers its actions use
 * (the chart is src/machines/containerRun.ts): what the last look found,
 * the run ref a step needs, a failure's output, and the adopt policy run on
 * the system clock's now.
 */
import type { AnyActorRef } from 'xstate';
import { type AdoptDecision, decide, type MaybeTimestamp } from './adoptPolicy.js';
import {
  ContainerRunError,
  type ContainerRunErrorCode,
  type ContainerRunEvent,
  type ContainerRunMode,
  type ContainerRunOutput,
  clockNow,
  type Observation,
  type RunRef,
} from './containerRunTypes.js';
import { decideOutputRead, type OutputReadDecision } from './outputReadPolicy.js';

/** What the last look at an adopted container found; a failed look is "unknown". */
export type LastObservation =
  | ({ failed: false } & Observation)
  | { failed: true; error: unknown }
  | null;

/** The machine's context; exported for inspectors and tests. */
export interface ContainerRunContext {
  sessionId: string;
  mode: ContainerRunMode;
  handle: string | null;
  sessionStartedAt: MaybeTimestamp;
  pollMs: number;
  budgetMs: number;
  ioTimeoutMs: number;
  /** On the actor system's clock; set when adoption (or the owner's fallback to it) began. */
  adoptionStartedAt: number | null;
  /** Observations made so far, failed ones included. */
  observations: number;
  lastObservation: LastObservation;
  decision: AdoptDecision | null;
  /** Reads of an exited run's output that failed so far. */
  outputReadFailures: number;
  /** On the actor system's clock; when the first read of the output failed. */
  outputReadFailedAt: number | null;
  /** What the output-read policy said after the last failed read. */
  outputReadDecision: OutputReadDecision | null;
  /** The failure the run ends with if the policy gives up on reading. */
  outputReadFailure: ContainerRunOutput | null;
  exitCode: number | null;
  /** Why an owner lost its exec stream and fell back to polling, if it did. */
  attachError: unknown;
  result: ContainerRunOutput | null;
}

export const notProvided = (name: string) =>
  new ContainerRunError('ACTOR_NOT_PROVIDED', `containerRun: provide the '${name}' action`);

/** Unprovided I/O answers with its error, so the run fails the way a failing call would. */
export function unprovided<P>(
  name: string,
  answer: (error: ContainerRunError, params: P) => ContainerRunEvent,
): (args: { self: AnyActorRef }, params: P) => void {
  return ({ self }, params) => {
    self.send(answer(notProvided(name), params));
  };
}

export function runRef(context: ContainerRunContext): RunRef {
  // Validation (adopt) and startRun (owner) both set the handle before any
  // state that needs it; reaching here without one is a bug, not an I/O fault.
  if (context.handle === null) throw notProvided('handle');
  return { sessionId: context.sessionId, handle: context.handle };
}

export function knownExitCode(context: ContainerRunContext): number {
  // Both ways into readingOutput (the exec's exit, the marker) set it first.
  if (context.exitCode === null)
    throw new Error('containerRun: reading output before an exit code');
  return context.exitCode;
}

export function failure(
  code: ContainerRunErrorCode,
  message: string,
  cause: unknown,
  exitCode: number | null,
): ContainerRunOutput {
  return { outcome: 'failed', error: new ContainerRunError(code, message, { cause }), exitCode };
}

/** Runs the adopt policy on what was just observed, at the system clock's now. */
export function decideNow(
  context: ContainerRunContext,
  containerStartedAt: MaybeTimestamp,
  clock: object,
  gone = false,
): AdoptDecision {
  // Clamped because a wall clock can step backwards (NTP); a negative elapsed
  // would make decide throw, and "no time passed" is the honest reading.
  const elapsed = Math.max(0, clockNow(clock) - (context.adoptionStartedAt ?? clockNow(clock)));
  return decide(containerStartedAt, context.sessionStartedAt, elapsed, context.budgetMs, gone);
}

/**
 * What a failed read of the output changes: the count, when the first
 * failed, the policy's answer (the error's code, or `timeout` for the
 * chart's own deadline, whose `after` event carries no error), and the
 * failure the run ends with if the policy gives up.
 */
export function failedRead(
  context: ContainerRunContext,
  event: { type: string } | { type: string; error: unknown },
  clock: object,
): Pick<
  ContainerRunContext,
  'outputReadFailures' | 'outputReadFailedAt' | 'outputReadDecision' | 'outputReadFailure'
> {
  const now = clockNow(clock);
  const failedAt = context.outputReadFailedAt ?? now;
  const reads = context.outputReadFailures + 1;
  const error = 'error' in event ? event.error : null;
  const timedOut = !('error' in event);
  return {
    outputReadFailures: reads,
    outputReadFailedAt: failedAt,
    outputReadDecision: decideOutputRead({
      code: timedOut ? 'timeout' : errorCode(error),
      // Clamped as in decideNow: a clock stepping back means no time passed.
      elapsedMs: Math.max(0, now - failedAt),
      budgetMs: context.budgetMs,
      pollMs: context.pollMs,
    }),
    outputReadFailure: timedOut
      ? failure(
          'READ_OUTPUT_TIMED_OUT',
          withReads(`readOutput took longer than ${context.ioTimeoutMs} ms`, reads),
          null,
          context.exitCode,
        )
      : failure(
          'READ_OUTPUT_FAILED',
          withReads('readOutput failed', reads),
          error,
          context.exitCode,
        ),
  };
}

/** A final read failure's message says how many reads were tried, when more than one. */
function withReads(what: string, reads: number): string {
  return reads > 1 ? `${what} (${reads} reads)` : what;
}

function errorCode(error: unknown): string | null {
  if (typeof error !== 'object' || error === null || !('code' in error)) return null;
  return typeof error.code === 'string' ? error.code : null;
}
