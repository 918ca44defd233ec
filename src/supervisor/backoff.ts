/**
 * Per-child restart backoff, as Akka's `restartWithBackoff`: the delays of
 * `src/common/backoff.ts` (exponential from `minMs` to `maxMs`, with a random
 * factor), reset once the child has stayed up for `resetAfterMs`, and an
 * optional limit on restarts. Pure: the random source and the instants are
 * passed in.
 */
import { type BackoffDelays, backoffDelay } from '../common/backoff.js';

export interface BackoffOptions extends BackoffDelays {
  /** 0.2 adds up to 20% to each delay. */
  randomFactor: number;
  /** A child that ran this long before crashing starts again from `minMs`. */
  resetAfterMs: number;
  /** Give up on the child after this many consecutive backoff restarts. */
  maxRestarts?: number;
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
