/**
 * The restart window, as OTP's `add_restart`: a list of restart instants,
 * newest first, holding only those inside the period. Pure: the supervisor
 * reads the clock and passes `now` in.
 */

/** roundtable's default: 3 restarts in 5 s (Elixir's); OTP's is 1 in 5 s. */
export const DEFAULT_INTENSITY = 3;
/** The period of the restart window in milliseconds. */
export const DEFAULT_PERIOD_MS = 5_000;

/**
 * Records a restart at `now`, dropping instants older than `now - periodMs`
 * (an instant exactly on the edge still counts, as in OTP).
 *
 * @example
 * ```ts
 * addRestart([], 1000, 5000) // => [1000]
 * addRestart([4000, 1000], 6000, 5000) // => [6000, 4000, 1000]
 * addRestart([4000, 1000], 6001, 5000) // => [6001, 4000]
 * ```
 */
export function addRestart(restarts: readonly number[], now: number, periodMs: number): number[] {
  const threshold = now - periodMs;
  const kept: number[] = [];
  for (const t of restarts) {
    if (t < threshold) break;
    kept.push(t);
  }
  return [now, ...kept];
}

/**
 * True when the window holds more restarts than the intensity allows: the
 * supervisor must give up.
 *
 * @example
 * ```ts
 * intensityExceeded([1000], 1) // => false
 * intensityExceeded([2000, 1000], 1) // => true
 * intensityExceeded([], 0) // => false
 * intensityExceeded([1], 0) // => true
 * ```
 */
export function intensityExceeded(restarts: readonly number[], intensity: number): boolean {
  return restarts.length > intensity;
}
