/**
 * One way to learn that something exited, whatever it is: a plain XState
 * ActorRef or a Supervisor. Monitors, the Registry and `call` all build on it.
 */
import type { AnyActorRef } from 'xstate';
import { type ExitReason, exitReasonFromOutput } from './exitReason.js';

/** Anything that is not an XState actor but can exit (a Supervisor). */
export interface ExitSource {
  readonly id: string;
  /** `undefined` while alive. */
  exitReason(): ExitReason | undefined;
  onExit(listener: (reason: ExitReason) => void): () => void;
}

export type Watchable = AnyActorRef | ExitSource;

// Who stopped an actor knows why (`shutdown`, `killed`); XState only knows it
// stopped. The supervisor records the reason here before stopping the actor.
const recorded = new WeakMap<object, ExitReason>();

/** Records why an actor is about to exit, for every watcher to read. */
export function recordExitReason(target: object, reason: ExitReason): void {
  if (!recorded.has(target)) recorded.set(target, reason);
}

function isExitSource(target: Watchable): target is ExitSource {
  return typeof (target as Partial<ExitSource>).onExit === 'function';
}

/** True while the target has not exited. */
export function isAlive(target: Watchable): boolean {
  if (isExitSource(target)) return target.exitReason() === undefined;
  return target.getSnapshot().status === 'active';
}

/** The id a DOWN event names. */
export function targetId(target: Watchable): string {
  return target.id;
}

/**
 * The reason of a finished actor: recorded by whoever stopped it, else read
 * from its snapshot. An actor stopped by someone who recorded nothing was
 * `killed`: it had no say in the matter.
 */
export function exitReasonOf(target: Watchable): ExitReason | undefined {
  if (isExitSource(target)) return target.exitReason();
  const snap = target.getSnapshot() as { status: string; output?: unknown; error?: unknown };
  if (snap.status === 'active') return undefined;
  const known = recorded.get(target);
  if (known) return known;
  if (snap.status === 'done') return exitReasonFromOutput(snap.output);
  if (snap.status === 'error') return { error: snap.error };
  return 'killed';
}

/**
 * Calls `listener` once when the target exits. Returns the unsubscribe
 * function, or `undefined` when the target is already gone (the caller
 * decides what that means: `noproc` for monitors and calls).
 */
export function watchExit(
  target: Watchable,
  listener: (reason: ExitReason) => void,
): (() => void) | undefined {
  if (!isAlive(target)) return undefined;
  if (isExitSource(target)) return target.onExit(listener);
  let fired = false;
  const fire = () => {
    if (fired) return;
    fired = true;
    listener(exitReasonOf(target) ?? 'killed');
  };
  // The error observer matters: an XState actor with an observer lacking one
  // rethrows the error at the root, which on Node is an uncaught exception.
  const sub = target.subscribe({
    next: (snap: { status: string }) => {
      if (snap.status === 'done') fire();
    },
    error: fire,
    complete: fire,
  });
  return () => sub.unsubscribe();
}
