/**
 * The one backoff formula of every layer: exponential from `minMs`, doubling,
 * capped at `maxMs`, plus up to `randomFactor` of itself as jitter so that
 * retries do not come back in lockstep. Supervisor restarts (Akka's
 * `restartWithBackoff`), board client reconnects, failed ticks, LISTEN
 * reconnects, engine probes and store retries all use it. Pure: the random
 * source is passed in.
 */

/** The delays of a backoff, in milliseconds. */
export interface BackoffDelays {
  /** The first delay (attempt 0). */
  minMs: number;
  /** Cap of the exponential, before jitter. */
  maxMs: number;
  /** 0.2 adds up to 20% to each delay. Default 0 (no jitter). */
  randomFactor?: number;
}

/**
 * The delay before retry number `attempt` (0 = the first retry):
 * `min(maxMs, minMs * 2^attempt) * (1 + randomFactor * random())`, rounded.
 * `random` returns a number in [0, 1]; it is not called without jitter.
 *
 * @example
 * ```ts
 * const delays = { minMs: 100, maxMs: 1000 }
 * backoffDelay(0, delays) // => 100
 * backoffDelay(3, delays) // => 800
 * backoffDelay(10, delays) // => 1000
 * backoffDelay(1, { ...delays, randomFactor: 0.5 }, () => 1) // => 300
 * backoffDelay(1, { ...delays, randomFactor: 0.5 }, () => 0) // => 200
 * backoffDelay(-1, delays) // throws RangeError
 * ```
 */
export function backoffDelay(
  attempt: number,
  delays: BackoffDelays,
  random: () => number = Math.random,
): number {
  if (!Number.isInteger(attempt) || attempt < 0) {
    throw new RangeError(`backoffDelay: attempt must be an integer >= 0, got ${attempt}`);
  }
  const exp = Math.min(delays.maxMs, delays.minMs * 2 ** Math.min(attempt, 52));
  const jitter = delays.randomFactor ? delays.randomFactor * Math.min(1, Math.max(0, random())) : 0;
  return Math.round(exp * (1 + jitter));
}
