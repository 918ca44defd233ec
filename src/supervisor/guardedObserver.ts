/**
 * An inspection observer that cannot break what it watches. XState calls
 * `inspect` synchronously inside an actor's step (its start, each event,
 * each snapshot), so an observer's throw fails that actor: at boot the
 * tree's start, mid-run a runner, and restart after restart the node.
 * Inspection is a view: a frame it could not take is reported and dropped.
 */
import type { InspectionEvent, Observer } from 'xstate';
import { InspectObserverError } from './errors.js';
import { reportError } from './Listeners.js';

/** What XState takes as `inspect`: an observer object or a function. */
export type InspectionObserver = Observer<InspectionEvent> | ((event: InspectionEvent) => void);

/**
 * `observer` as a function whose throw goes to `onThrow` (as an
 * `InspectObserverError` naming the frame) instead of to its caller.
 *
 * @example
 * ```ts
 * const seen = [];
 * const guarded = guardObserver(() => { throw new Error('bug'); }, (e) => seen.push(e.code));
 * guarded({ type: '@xstate.event' });
 * seen // => ['INSPECT_OBSERVER_FAILED']
 * ```
 */
export function guardObserver(
  observer: InspectionObserver,
  onThrow: (error: InspectObserverError) => void,
): (event: InspectionEvent) => void {
  const call =
    typeof observer === 'function' ? observer : (event: InspectionEvent) => observer.next?.(event);
  return (event) => {
    try {
      call(event);
    } catch (error) {
      reportError(onThrow, new InspectObserverError(event.type, error));
    }
  };
}
