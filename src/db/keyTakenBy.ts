import type { TickOutcome } from './tickTypes.js';

/** How the tick's enqueue says a key names a task submitted with another request. */
export const KEY_IN_USE = 'key in use by ';

/**
 * The task a keyed enqueue's `stale` outcome names (its key was submitted
 * before with another title or spec), or undefined for any other outcome.
 *
 * @example
 * ```ts
 * keyTakenBy({ ref: '1', kind: 'stale', actual: { status: 'key in use by tsk_1', epoch: 0 } }) // => 'tsk_1'
 * keyTakenBy({ ref: '1', kind: 'stale', actual: { status: 'running', epoch: 2 } }) // => undefined
 * keyTakenBy({ ref: '1', kind: 'not_found' }) // => undefined
 * ```
 */
export function keyTakenBy(outcome: TickOutcome): string | undefined {
  if (outcome.kind !== 'stale' || !outcome.actual.status.startsWith(KEY_IN_USE)) return undefined;
  return outcome.actual.status.slice(KEY_IN_USE.length);
}
