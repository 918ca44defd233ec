/**
 * Monitors, as Erlang's: `monitor(watcher, target)` delivers exactly one DOWN
 * with the target's exit reason. DOWN is delivered on a microtask, like a
 * message landing in a mailbox, so `demonitor(ref, { flush: true })` can still
 * take back a DOWN that was sent but not yet received.
 *
 * Inspection: when the target (or else the watcher) was started by a
 * supervisor with `inspect`, each monitor is told to that observer as
 * `roundtable.monitor`, then `roundtable.down` or `roundtable.demonitor`
 * (monitorInspection.ts). Without an observer this costs one WeakMap lookup.
 */
import type { AnyActorRef } from 'xstate';
import type { MonitorEvent } from './events.js';
import type { ExitReason } from './exitReason.js';
import { monitorShellFor, sessionIdOf } from './monitorInspection.js';
import { targetId, type Watchable, watchExit } from './watchExit.js';

export type MonitorRef = `#Monitor<${number}>`;

export interface DownEvent {
  type: 'DOWN';
  ref: MonitorRef;
  id: string;
  reason: ExitReason;
}

/**
 * An XState actor (gets DOWN as an event) or a plain callback. A watcher
 * object that forwards to an actor may name it with `sessionId`, so an
 * inspector draws the monitor from that actor.
 */
export type MonitorWatcher =
  | { send(event: DownEvent): void; readonly sessionId?: string }
  | ((event: DownEvent) => void);

/** What an inspector is told about one monitor; absent when nobody inspects. */
interface Seen {
  shell: AnyActorRef;
  watcherSessionId: string | null;
  targetSessionId: string | null;
  targetId: string;
}

interface Entry {
  state: 'watching' | 'sent';
  unwatch: (() => void) | undefined;
  seen: Seen | undefined;
}

function tell(
  seen: Seen,
  ref: MonitorRef,
  type: 'roundtable.monitor' | 'roundtable.demonitor',
): void {
  const { shell, ...edge } = seen;
  const event: MonitorEvent = { type, ref, ...edge };
  shell.send(event);
}

const monitors = new Map<MonitorRef, Entry>();
let seq = 0;

function deliver(ref: MonitorRef, watcher: MonitorWatcher, id: string, reason: ExitReason): void {
  const entry = monitors.get(ref);
  if (!entry) return;
  entry.state = 'sent';
  entry.unwatch = undefined;
  queueMicrotask(() => {
    // Flushed between sending and receiving.
    if (!monitors.delete(ref)) return;
    const down: DownEvent = { type: 'DOWN', ref, id, reason };
    if (typeof watcher === 'function') watcher(down);
    else watcher.send(down);
    // After the delivery: an inspector sees the watcher receive DOWN first.
    if (entry.seen) {
      const { shell, ...edge } = entry.seen;
      const event: MonitorEvent = { type: 'roundtable.down', ref, reason, ...edge };
      shell.send(event);
    }
  });
}

/**
 * Watches `target` (any XState ActorRef, or a Supervisor). A target that is
 * already gone yields DOWN with `noproc`.
 */
export function monitor(watcher: MonitorWatcher, target: Watchable): MonitorRef {
  seq += 1;
  const ref: MonitorRef = `#Monitor<${seq}>`;
  const id = targetId(target);
  const shell = monitorShellFor(target, watcher);
  const seen: Seen | undefined = shell && {
    shell,
    watcherSessionId: sessionIdOf(watcher),
    targetSessionId: sessionIdOf(target),
    targetId: id,
  };
  const entry: Entry = { state: 'watching', unwatch: undefined, seen };
  monitors.set(ref, entry);
  if (seen) tell(seen, ref, 'roundtable.monitor');
  const unwatch = watchExit(target, (reason) => deliver(ref, watcher, id, reason));
  if (!unwatch) deliver(ref, watcher, id, 'noproc');
  else if (entry.state === 'watching') entry.unwatch = unwatch;
  return ref;
}

/**
 * Stops a monitor. Returns true when it was still watching. A DOWN already
 * sent is still delivered unless `flush` is set, as in Erlang.
 */
export function demonitor(ref: MonitorRef, options: { flush?: boolean } = {}): boolean {
  const entry = monitors.get(ref);
  if (!entry) return false;
  if (entry.state === 'watching') {
    entry.unwatch?.();
    monitors.delete(ref);
    if (entry.seen) tell(entry.seen, ref, 'roundtable.demonitor');
    return true;
  }
  if (options.flush) {
    monitors.delete(ref);
    if (entry.seen) tell(entry.seen, ref, 'roundtable.demonitor');
  }
  return false;
}

/** How many monitors are live or have a DOWN in flight (for leak tests). */
export function activeMonitorCount(): number {
  return monitors.size;
}
