/**
 * The longest wait a Node timer holds: 2^31 - 1 ms (~24.8 days). A longer
 * `setTimeout` fires after 1 ms (with a TimeoutOverflowWarning), so every
 * duration that becomes a timer is checked against it, and every derived
 * one (a multiple of a configured period) is clamped to it.
 *
 * @example
 * ```ts
 * MAX_TIMER_MS // => 2147483647
 * clampTimerMs(3_000_000_000) // => 2147483647
 * clampTimerMs(600_000) // => 600000
 * ```
 */
export const MAX_TIMER_MS = 2_147_483_647;

/** `ms`, or `MAX_TIMER_MS` when it is longer than a timer holds. */
export function clampTimerMs(ms: number): number {
  return Math.min(ms, MAX_TIMER_MS);
}
