/**
 * How a monitor learns the inspection observer without its callers passing
 * one: a supervisor started with `inspect` notes, for every child it spawns,
 * that child's XState system (shared with everything the child invokes) and
 * itself. `monitor(watcher, target)` looks the target up, then the watcher,
 * and tells that observer's monitor shell: a tiny actor (id
 * `roundtable.monitors`) whose received events are the monitor events and
 * whose snapshot counts the live monitors. XState's own `system.inspect`
 * only adds observers; it cannot tell us which are attached.
 */
import { type AnyActorRef, createActor, fromTransition } from 'xstate';
import type { MonitorEvent } from './events.js';
import type { InspectionObserver } from './inspectionGate.js';

export type InspectObserver = InspectionObserver;

/** The id of every monitor shell actor. */
export const MONITOR_SHELL_ID = 'roundtable.monitors';

export interface MonitorShellSnapshot {
  live: number;
}

const observers = new WeakMap<object, InspectObserver>();
const shells = new WeakMap<InspectObserver, AnyActorRef>();

function keyOf(x: object): object {
  const system = (x as { system?: unknown }).system;
  return typeof system === 'object' && system !== null ? system : x;
}

/**
 * Notes that `ref` (an actor: its whole system; or a Supervisor) is seen by
 * `inspect`. The supervisor calls it; call it yourself for an actor you
 * created with `inspect` outside a supervisor, if you want its monitors seen.
 */
export function noteInspected(ref: object, inspect: InspectObserver): void {
  observers.set(keyOf(ref), inspect);
}

/**
 * The monitor shell's state: how many monitors are live.
 *
 * @example
 * ```ts
 * const edge = { ref: '#Monitor<1>', watcherSessionId: 'x:1', targetSessionId: 'x:2', targetId: 'a' }
 * countMonitors({ live: 0 }, { type: 'roundtable.monitor', ...edge }) // => { live: 1 }
 * countMonitors({ live: 1 }, { type: 'roundtable.down', reason: 'normal', ...edge }) // => { live: 0 }
 * ```
 */
export function countMonitors(
  state: MonitorShellSnapshot,
  event: MonitorEvent,
): MonitorShellSnapshot {
  return { live: Math.max(0, state.live + (event.type === 'roundtable.monitor' ? 1 : -1)) };
}

/** The shell of the observer that sees the first of `sides` noted, if any. */
export function monitorShellFor(...sides: unknown[]): AnyActorRef | undefined {
  for (const side of sides) {
    if (side === null || (typeof side !== 'object' && typeof side !== 'function')) continue;
    const inspect = observers.get(keyOf(side));
    if (inspect === undefined) continue;
    let shell = shells.get(inspect);
    if (shell === undefined) {
      shell = createActor(fromTransition(countMonitors, { live: 0 }), {
        id: MONITOR_SHELL_ID,
        inspect,
      });
      shell.start();
      shells.set(inspect, shell);
    }
    return shell;
  }
  return undefined;
}

/** An actor's sessionId, or a watcher's `sessionId` property; `null` otherwise. */
export function sessionIdOf(x: unknown): string | null {
  if (x === null || (typeof x !== 'object' && typeof x !== 'function')) return null;
  const id = (x as { sessionId?: unknown }).sessionId;
  return typeof id === 'string' ? id : null;
}
