/**
 * Per-child restart backoff, as Akka's `restartWithBackoff`: exponential from
 * `minMs` to `maxMs`, with a random factor, reset once the child has stayed up
 * for `resetAfterMs`, and an optional limit on restarts. Pure: the random
 * source and the instants are passed in.
 */

export interface BackoffOptions {
  minMs: number;
  maxMs: number;
  /** 0.2 adds up to 20% to each delay. */
  randomFactor: number;
  /** A child that ran this long before crashing starts again from `minMs`. */
  resetAfterMs: number;
  /** Give up on the child after this many consecutive backoff restarts. */
  maxRestarts?: number;
}

/**
 * The delay before restart number `attempt` (0 = first restart).
 *
 * @example
 * ```ts
 * const opts = { minMs: 100, maxMs: 1000, randomFactor: 0, resetAfterMs: 5000 }
 * backoffDelay(0, opts, () => 0) // => 100
 * backoffDelay(3, opts, () => 0) // => 800
 * backoffDelay(10, opts, () => 0) // => 1000
 * backoffDelay(1, { ...opts, randomFactor: 0.5 }, () => 1) // => 300
 * ```
 */
export function backoffDelay(attempt: number, opts: BackoffOptions, random: () => number): number {
  const exp = Math.min(opts.maxMs, opts.minMs * 2 ** Math.min(attempt, 52));
  return Math.round(exp * (1 + opts.randomFactor * random()));
}

/** What to do about a crashed child under backoff. */
export type BackoffDecision =
  | { kind: 'restart'; delayMs: number; attempt: number }
  | { kind: 'give_up' };

/**
 * Decides the next backoff step: the attempt counter resets when the child
 * ran at least `resetAfterMs`; past `maxRestarts` the child is given up.
 *
 * @example
 * ```ts
 * const opts = { minMs: 100, maxMs: 1000, randomFactor: 0, resetAfterMs: 5000, maxRestarts: 2 }
 * nextBackoff(0, 10, opts, () => 0) // => { kind: 'restart', delayMs: 100, attempt: 1 }
 * nextBackoff(1, 10, opts, () => 0) // => { kind: 'restart', delayMs: 200, attempt: 2 }
 * nextBackoff(2, 10, opts, () => 0) // => { kind: 'give_up' }
 * nextBackoff(2, 6000, opts, () => 0) // => { kind: 'restart', delayMs: 100, attempt: 1 }
 * ```
 */
export function nextBackoff(
  attempts: number,
  ranForMs: number,
  opts: BackoffOptions,
  random: () => number,
): BackoffDecision {
  const base = ranForMs >= opts.resetAfterMs ? 0 : attempts;
  if (opts.maxRestarts !== undefined && base >= opts.maxRestarts) return { kind: 'give_up' };
  return { kind: 'restart', delayMs: backoffDelay(base, opts, random), attempt: base + 1 };
}
