/** Reconnect delays: exponential, capped, with jitter so clients do not reconnect in lockstep. */

/** Backoff settings, in milliseconds. */
export interface BackoffPolicy {
  initialMs: number;
  maxMs: number;
  factor: number;
}

/** The client's default: 250 ms, doubling, at most 10 s. */
export const DEFAULT_BACKOFF: BackoffPolicy = { initialMs: 250, maxMs: 10_000, factor: 2 };

/**
 * Delay before reconnect attempt `attempt` (0 for the first). "Equal jitter":
 * between half and all of the capped exponential, so a server restart does not
 * get every client back in the same millisecond, yet nobody retries at once.
 * `random` returns a number in [0, 1).
 *
 * @example
 * ```ts
 * backoffDelay(0, { initialMs: 250, maxMs: 10000, factor: 2 }, () => 1) // => 250
 * backoffDelay(3, { initialMs: 250, maxMs: 10000, factor: 2 }, () => 1) // => 2000
 * backoffDelay(3, { initialMs: 250, maxMs: 10000, factor: 2 }, () => 0) // => 1000
 * backoffDelay(50, { initialMs: 250, maxMs: 10000, factor: 2 }, () => 1) // => 10000
 * backoffDelay(-1, { initialMs: 250, maxMs: 10000, factor: 2 }, () => 1) // throws RangeError
 * ```
 */
export function backoffDelay(attempt: number, policy: BackoffPolicy, random: () => number): number {
  if (!Number.isInteger(attempt) || attempt < 0) {
    throw new RangeError(`backoffDelay: attempt must be an integer >= 0, got ${attempt}`);
  }
  const capped = Math.min(policy.maxMs, policy.initialMs * policy.factor ** Math.min(attempt, 60));
  return Math.round(capped / 2 + (capped / 2) * Math.min(1, Math.max(0, random())));
}
