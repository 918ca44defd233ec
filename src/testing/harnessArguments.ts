/**
 * The harness's own checks of what a test hands it, before anything runs:
 * `advance`'s duration. Pure: no clock, no store.
 */

/**
 * A harness call was given something it cannot use: `field` names it as the
 * test wrote it (`pollMS`, `advance.ms`), the message says what it takes.
 */
export class HarnessArgumentError extends Error {
  override readonly name = 'HarnessArgumentError';
  readonly code = 'HARNESS_INVALID_ARGUMENT';
  constructor(
    readonly field: string,
    problem: string,
  ) {
    super(`harness: ${field} ${problem}`);
  }
}

const isDuration = (v: unknown): v is number =>
  typeof v === 'number' && Number.isFinite(v) && v >= 0;

/**
 * Returns `ms` if `advance` can move the clock by it (a finite number >= 0),
 * else throws a `HarnessArgumentError`: a NaN once made the virtual clock
 * NaN for the rest of the test, and a negative moved nothing, silently.
 *
 * @example
 * ```ts
 * checkAdvanceMs(60_000) // => 60000
 * checkAdvanceMs(0) // => 0
 * checkAdvanceMs(Number.NaN) // throws HarnessArgumentError
 * checkAdvanceMs(-1) // throws HARNESS_INVALID_ARGUMENT
 * checkAdvanceMs(Number.POSITIVE_INFINITY) // throws HarnessArgumentError
 * checkAdvanceMs('5000' as never) // throws HarnessArgumentError
 * ```
 */
export function checkAdvanceMs(ms: number): number {
  if (!isDuration(ms))
    throw new HarnessArgumentError(
      'advance.ms',
      `must be a finite number of ms >= 0 (virtual time only moves forward), got ${typeof ms === 'number' ? String(ms) : typeof ms}`,
    );
  return ms;
}
