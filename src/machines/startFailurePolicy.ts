/**
 * The start-failure policy: `backend.start` rejected. Keep the session and
 * try again later, queue a fresh attempt, or fail it, and with which reason?
 *
 * Why it exists: with the engine unreachable, every queued task used to fail
 * `start_failed` within milliseconds and was never retried, and an image the
 * engine could not get failed only at the start timeout, without the
 * engine's reason. Pure: the TaskRunner passes the error's code, its message
 * and how many starts failed so far, and acts on the answer.
 */

/** The `ContainerError` codes this policy tells apart; any other code is a `start_failed`. */
export type StartFailureCode =
  | 'unavailable'
  | 'timeout'
  | 'rejected'
  | 'invalid_argument'
  | (string & {});

/** Limits of the retries; `START_FAILURE_DEFAULTS` holds the documented defaults. */
export interface StartRetryLimits {
  /** Failed starts after which the session fails, counting the first (≥ 1). */
  maxAttempts: number;
  /** Delay after the first failure; doubled after each further one (≥ 0). */
  baseDelayMs: number;
  /** The cap on any delay (≥ baseDelayMs). */
  maxDelayMs: number;
}

/**
 * 8 attempts, 1 s doubling to at most 30 s: about 1.5 minutes of retries
 * (1+2+4+8+16+30+30 s) before a start fails, longer than a Swarm manager
 * takes to come back from a restart.
 */
export const START_FAILURE_DEFAULTS: Readonly<StartRetryLimits> = Object.freeze({
  maxAttempts: 8,
  baseDelayMs: 1000,
  maxDelayMs: 30_000,
});

export interface StartFailure extends Partial<StartRetryLimits> {
  /** The rejection's `ContainerError` code; use `'engine'` for anything that is not one. */
  code: StartFailureCode;
  /** The error's message: the engine's own reason for `rejected`. */
  message?: string;
  /** How many starts of this work have failed, this one included (1 for the first). */
  attempt: number;
}

/** Stable codes of a final start failure, the first word of its `reason`. */
export type StartFailureReasonCode =
  | 'engine_unavailable'
  | 'start_rejected'
  | 'start_invalid'
  | 'start_failed';

export type StartFailureAction =
  /** The engine is down or slow: not the session's fault. Keep it queued and start it again after `delayMs`. */
  | { action: 'retry_later'; delayMs: number; reason: string }
  /** A failure of this attempt (a leftover name, a lost exec): after `delayMs`, fail it as recoverable and queue attempt + 1. */
  | { action: 'requeue'; delayMs: number; reason: string }
  /** Done trying. `userRecoverable` says whether the board offers a retry. */
  | { action: 'fail'; code: StartFailureReasonCode; reason: string; userRecoverable: boolean };

/**
 * The delay before the next try after `attempt` failures: `baseDelayMs`
 * doubled per further failure, capped at `maxDelayMs`. No jitter, so tests and
 * replays are deterministic; the runtime holds every start on one engine
 * ping while the engine is down, so retries do not stampede it.
 *
 * @example
 * ```ts
 * startRetryDelayMs(1) // => 1000
 * startRetryDelayMs(3) // => 4000
 * startRetryDelayMs(7) // => 30000
 * startRetryDelayMs(100) // => 30000
 * startRetryDelayMs(2, { baseDelayMs: 50, maxDelayMs: 80 }) // => 80
 * startRetryDelayMs(0) // throws RangeError
 * ```
 */
export function startRetryDelayMs(
  attempt: number,
  limits: Partial<Omit<StartRetryLimits, 'maxAttempts'>> = {},
): number {
  const { baseDelayMs, maxDelayMs } = checkedLimits(limits);
  checkAttempt(attempt);
  // Capped exponent: 2 ** 1024 is Infinity, and Infinity * 0 is NaN.
  const exponent = Math.min(attempt - 1, 52);
  return Math.min(maxDelayMs, baseDelayMs * 2 ** exponent);
}

/**
 * Decides what to do after `attempt` starts of one piece of work failed.
 * Engine down (`unavailable`, `timeout`): retry later with backoff, then fail
 * as recoverable. The engine refused the spec (`rejected`) or the input was
 * invalid (`invalid_argument`): fail at once, not recoverable, since the same
 * spec fails the same way; the engine's reason is on the card. Anything else
 * (`engine`, `conflict`, `exec_lost`, ...): a fresh attempt, then fail as
 * recoverable.
 *
 * @example
 * ```ts
 * startFailureAction({ code: 'unavailable', attempt: 1 }) // => { action: 'retry_later', delayMs: 1000, reason: 'engine_unavailable' }
 * startFailureAction({ code: 'timeout', attempt: 2 }) // => { action: 'retry_later', delayMs: 2000, reason: 'engine_unavailable' }
 * startFailureAction({ code: 'unavailable', attempt: 5, maxAttempts: 5 }) // => { action: 'fail', code: 'engine_unavailable', reason: 'engine_unavailable after 5 attempts', userRecoverable: true }
 * startFailureAction({ code: 'unavailable', message: 'simulated API outage', attempt: 8 }).reason // => 'engine_unavailable after 8 attempts: simulated API outage'
 * startFailureAction({ code: 'rejected', message: 'No such image: x', attempt: 1 }) // => { action: 'fail', code: 'start_rejected', reason: 'start_rejected: No such image: x', userRecoverable: false }
 * startFailureAction({ code: 'invalid_argument', message: 'empty command', attempt: 1 }).reason // => 'start_invalid: empty command'
 * startFailureAction({ code: 'conflict', message: 'rt-s1 exists', attempt: 1 }) // => { action: 'requeue', delayMs: 1000, reason: 'start_failed: rt-s1 exists' }
 * startFailureAction({ code: 'engine', attempt: 8 }) // => { action: 'fail', code: 'start_failed', reason: 'start_failed after 8 attempts', userRecoverable: true }
 * startFailureAction({ code: 'timeout', attempt: 1, maxAttempts: 0 }) // throws RangeError
 * ```
 */
export function startFailureAction(failure: StartFailure): StartFailureAction {
  const limits = checkedLimits(failure);
  const { attempt, code } = failure;
  checkAttempt(attempt);
  const detail = failure.message?.trim() ? `: ${failure.message.trim()}` : '';
  if (code === 'rejected' || code === 'invalid_argument') {
    const reasonCode = code === 'rejected' ? 'start_rejected' : 'start_invalid';
    return {
      action: 'fail',
      code: reasonCode,
      reason: reasonCode + detail,
      userRecoverable: false,
    };
  }
  const engineDown = code === 'unavailable' || code === 'timeout';
  const reasonCode = engineDown ? 'engine_unavailable' : 'start_failed';
  if (attempt >= limits.maxAttempts) {
    return {
      action: 'fail',
      code: reasonCode,
      reason: `${reasonCode} after ${attempt} attempts${detail}`,
      userRecoverable: true,
    };
  }
  const delayMs = startRetryDelayMs(attempt, limits);
  // The engine's words for an outage say nothing about the session; for any
  // other failure they are the only clue, so the requeued attempt keeps them.
  if (engineDown) return { action: 'retry_later', delayMs, reason: reasonCode };
  return { action: 'requeue', delayMs, reason: reasonCode + detail };
}

function checkedLimits(given: Partial<StartRetryLimits>): StartRetryLimits {
  const limits = {
    maxAttempts: given.maxAttempts ?? START_FAILURE_DEFAULTS.maxAttempts,
    baseDelayMs: given.baseDelayMs ?? START_FAILURE_DEFAULTS.baseDelayMs,
    maxDelayMs: given.maxDelayMs ?? START_FAILURE_DEFAULTS.maxDelayMs,
  };
  if (!Number.isInteger(limits.maxAttempts) || limits.maxAttempts < 1) {
    throw new RangeError(`maxAttempts must be an integer ≥ 1, got ${limits.maxAttempts}`);
  }
  if (!Number.isFinite(limits.baseDelayMs) || limits.baseDelayMs < 0) {
    throw new RangeError(`baseDelayMs must be a finite number ≥ 0, got ${limits.baseDelayMs}`);
  }
  if (!Number.isFinite(limits.maxDelayMs) || limits.maxDelayMs < limits.baseDelayMs) {
    throw new RangeError(
      `maxDelayMs must be finite and ≥ baseDelayMs (${limits.baseDelayMs}), got ${limits.maxDelayMs}`,
    );
  }
  return limits;
}

function checkAttempt(attempt: number): void {
  if (!Number.isInteger(attempt) || attempt < 1) {
    throw new RangeError(
      `attempt must be an integer ≥ 1 (1 for the first failure), got ${attempt}`,
    );
  }
}
