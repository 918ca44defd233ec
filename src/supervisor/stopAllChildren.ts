/**
 * Stopping every child of a supervisor in reverse start order, as OTP's
 * `terminate_children`: gracefully (each by its shutdown spec, waiting for
 * one before the next, so a child never outlives one started after it) or
 * brutally (every one killed now, as when the supervisor itself is killed
 * or crashes).
 */
import type { ChildTable } from './ChildTable.js';
import type { SupervisorClock } from './clock.js';
import type { ExitReason } from './exitReason.js';
import { killChild, stopChild } from './stopChild.js';

type Report = (childId: string, reason: ExitReason) => void;

/** Kills every child at once, last started first; `report` hears each one that was running. */
export function killAllChildren(
  children: ChildTable,
  clock: SupervisorClock,
  report: Report,
): void {
  for (const id of children.reversedIds()) {
    const c = children.get(id);
    if (c !== undefined && killChild(c, clock)) report(id, 'killed');
  }
}

/**
 * Stops every child by its shutdown spec, last started first, each after the
 * one before has ended, then calls `onStopped` (the supervisor's exit).
 *
 * Only a child that traps the shutdown is waited for. When none does, every
 * child is stopped and `onStopped` has run before this returns, so a nested
 * supervisor goes down inside its parent's pass and the parent stops the
 * next sibling before any microtask, a DOWN among them, can run. The runtime
 * needs that: its RunnerPool is stopped after the runners' supervisor, and a
 * runner's DOWN it handled while still running would give a stopping node's
 * run back to the line as lost, instead of leaving it for another node to
 * adopt. So `onStopped` is called here, not after the caller awaits this:
 * that await costs each level of the tree microtasks, enough for the DOWN
 * (352367c, backed out in 4a5d14d; test/supervisor/stopAllChildren.test.ts).
 */
export async function stopAllChildren(
  children: ChildTable,
  clock: SupervisorClock,
  report: Report,
  onStopped: () => void,
): Promise<void> {
  for (const id of children.reversedIds()) {
    const c = children.get(id);
    // Only a graceful stop is waited for; a brutal kill is done when
    // stopChild returns, and awaiting it anyway would cost a tick per child.
    const stopping = c && stopChild(c, clock, report);
    if (stopping) await stopping;
  }
  onStopped();
}
