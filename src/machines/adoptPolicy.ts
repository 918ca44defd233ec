/**
 * The adopt policy: while an owner that lost its exec polls a container for
 * the exit marker, should it keep polling or give up?
 *
 * Two independent ways out, because the precise one depends on timestamps we
 * may not have: the container provably restarted after the exec (its `/tmp`,
 * and so the marker, is gone), or the wall-clock budget ran out.
 *
 * Pure: no clock, no I/O. The caller reads the clock and the container.
 */

/** What an adopting owner should do next. */
export type AdoptDecision = { kind: 'poll' } | { kind: 'give_up'; reason: GiveUpReason };

/**
 * Why an adoption was abandoned. `container_gone`: the engine says the run's
 * service or container no longer exists at all (removed behind our back), so
 * the marker can never appear either.
 */
export type GiveUpReason = 'container_replaced' | 'container_gone' | 'timeout';

/** A timestamp as it comes back from Docker or a row: possibly missing or unparsable. */
export type MaybeTimestamp = Date | string | number | null | undefined;

/**
 * Normalises a timestamp; anything that is not a real instant becomes `null`.
 * Docker reports a never-started container as `0001-01-01T00:00:00Z`; that is
 * "unknown", not a start time.
 *
 * @example
 * ```ts
 * toInstant('2026-07-14T10:44:00Z') // => Date.parse('2026-07-14T10:44:00Z')
 * toInstant('0001-01-01T00:00:00Z') // => null
 * toInstant('not a date') // => null
 * toInstant(undefined) // => null
 * ```
 */
export function toInstant(value: MaybeTimestamp): number | null {
  if (value === null || value === undefined) return null;
  const ms =
    value instanceof Date ? value.getTime() : typeof value === 'number' ? value : Date.parse(value);
  if (!Number.isFinite(ms) || ms <= 0) return null;
  return ms;
}

/**
 * True only when both timestamps are known and the container started strictly
 * after the session's exec: then the container was replaced, and the marker
 * that lived in the old container's `/tmp` can never appear.
 *
 * An unknown timestamp is never evidence of replacement: a Docker hiccup must
 * not abandon a healthy run; the budget decides instead.
 *
 * @example
 * ```ts
 * containerReplaced('2026-07-14T12:47:00Z', '2026-07-14T10:44:00Z') // => true
 * containerReplaced('2026-07-14T10:44:00Z', '2026-07-14T10:44:00Z') // => false
 * containerReplaced('2026-07-14T09:00:00Z', '2026-07-14T10:44:00Z') // => false
 * containerReplaced(null, '2026-07-14T10:44:00Z') // => false
 * containerReplaced('2026-07-14T12:47:00Z', 'garbage') // => false
 * ```
 */
export function containerReplaced(
  containerStartedAt: MaybeTimestamp,
  sessionStartedAt: MaybeTimestamp,
): boolean {
  const container = toInstant(containerStartedAt);
  const session = toInstant(sessionStartedAt);
  if (container === null || session === null) return false;
  return container > session;
}

/**
 * Decides whether to keep polling for the exit marker. A run the engine says
 * is gone (`gone`: its service or container no longer exists, removed
 * behind the runtime's back) holds no marker and never will, so it is given
 * up at once rather than at the end of the budget, holding its slot.
 * Replacement is checked before the budget: when both hold, the precise
 * reason wins. (A marker seen in the same look is read before any of this:
 * the run ended, whatever became of its container.)
 *
 * Throws a `RangeError` naming the argument when `elapsedMs` is NaN or
 * negative, or `budgetMs` is not a positive number.
 *
 * The real incident: the container was rescheduled two hours after the exec.
 *
 * @example
 * ```ts
 * decide('2026-07-14T12:47:00Z', '2026-07-14T10:44:00Z', 0, 900000) // => { kind: 'give_up', reason: 'container_replaced' }
 * decide('2026-07-14T10:00:00Z', '2026-07-14T10:44:00Z', 60000, 900000) // => { kind: 'poll' }
 * decide(null, '2026-07-14T10:44:00Z', 900000, 900000) // => { kind: 'give_up', reason: 'timeout' }
 * decide(null, null, 899999, 900000) // => { kind: 'poll' }
 * decide('2026-07-14T12:47:00Z', '2026-07-14T10:44:00Z', 999999, 900000) // => { kind: 'give_up', reason: 'container_replaced' }
 * decide(null, null, Number.NaN, 900000) // throws RangeError
 * decide(null, null, -1, 900000) // throws RangeError
 * decide(null, null, 0, 0) // throws RangeError
 * decide(null, '2026-07-14T10:44:00Z', 0, 900000, true) // => { kind: 'give_up', reason: 'container_gone' }
 * decide(null, '2026-07-14T10:44:00Z', 0, 900000, false) // => { kind: 'poll' }
 * ```
 */
export function decide(
  containerStartedAt: MaybeTimestamp,
  sessionStartedAt: MaybeTimestamp,
  elapsedMs: number,
  budgetMs: number,
  gone = false,
): AdoptDecision {
  if (typeof elapsedMs !== 'number' || Number.isNaN(elapsedMs) || elapsedMs < 0) {
    throw new RangeError(`decide: elapsedMs must be a number >= 0, got ${String(elapsedMs)}`);
  }
  if (typeof budgetMs !== 'number' || Number.isNaN(budgetMs) || budgetMs <= 0) {
    throw new RangeError(`decide: budgetMs must be a number > 0, got ${String(budgetMs)}`);
  }
  if (gone) return { kind: 'give_up', reason: 'container_gone' };
  if (containerReplaced(containerStartedAt, sessionStartedAt)) {
    return { kind: 'give_up', reason: 'container_replaced' };
  }
  if (elapsedMs >= budgetMs) return { kind: 'give_up', reason: 'timeout' };
  return { kind: 'poll' };
}
