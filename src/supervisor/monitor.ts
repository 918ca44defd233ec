/**
 * Monitors, as Erlang's: `monitor(watcher, target)` delivers exactly one DOWN
 * with the target's exit reason. DOWN is delivered on a microtask, like a
 * message landing in a mailbox, so `demonitor(ref, { flush: true })` can still
 * take back a DOWN that was sent but not yet received.
 */
import type { ExitReason } from './exitReason.js';
import { targetId, type Watchable, watchExit } from './watchExit.js';

export type MonitorRef = `#Monitor<${number}>`;

export interface DownEvent {
  type: 'DOWN';
  ref: MonitorRef;
  id: string;
  reason: ExitReason;
}

/** An XState actor (gets DOWN as an event) or a plain callback. */
export type MonitorWatcher = { send(event: DownEvent): void } | ((event: DownEvent) => void);

interface Entry {
  state: 'watching' | 'sent';
  unwatch: (() => void) | undefined;
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
  const entry: Entry = { state: 'watching', unwatch: undefined };
  monitors.set(ref, entry);
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
    return true;
  }
  if (options.flush) monitors.delete(ref);
  return false;
}

/** How many monitors are live or have a DOWN in flight (for leak tests). */
export function activeMonitorCount(): number {
  return monitors.size;
}
