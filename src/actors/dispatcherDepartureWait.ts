/**
 * The wait before a tick leaves: checks `departs` (dispatcherDeparture.ts)
 * once per turn of the event loop and calls `leave` at the first check
 * that says go, or at once when told to (the dispatcher stopped).
 *
 * Why its own concept: dispatcherDeparture.ts is the rule, pure, tested
 * without a loop; this is the one piece of the dispatcher that drives the
 * event loop itself (its turns, or one microtask when there is no
 * coalescing). Kept inside the dispatcher's `schedule`, the loop's counters
 * sat among the state of the ticks; here they live only as long as one wait.
 */

import { departs } from './dispatcherDeparture.js';

/** What one wait reads and calls. */
export interface DepartureWait {
  /** Ops waiting now. */
  pending(): number;
  /** Whether to leave at the next check whatever `departs` says (the dispatcher stopped). */
  leaveNow(): boolean;
  /** Most ops one tick carries. */
  maxOps: number;
  /** Most turns to wait while ops keep arriving; 0: leave after one microtask. */
  maxTurns: number;
  /** Runs `fn` on the next turn of the event loop. */
  nextTurn(fn: () => void): void;
  /** The tick leaves. Called once. */
  leave(): void;
}

/** Starts a wait; `w.leave` is called once the tick should leave. */
export function waitToDepart(w: DepartureWait): void {
  let turns = 0;
  let before = w.pending();
  const check = () => {
    turns += 1;
    const pending = w.pending();
    const go =
      w.leaveNow() ||
      departs({ turns, pending, pendingBefore: before, maxOps: w.maxOps, maxTurns: w.maxTurns });
    if (!go) {
      before = pending;
      w.nextTurn(check);
      return;
    }
    w.leave();
  };
  // No coalescing: one microtask, so only the submits of this turn ride along.
  if (w.maxTurns === 0) queueMicrotask(check);
  else w.nextTurn(check);
}
