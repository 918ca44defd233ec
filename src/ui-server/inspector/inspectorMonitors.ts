/**
 * Who monitors whom, as the inspector shows it: a pure fold over the
 * monitor events (`roundtable.monitor`, `roundtable.demonitor`,
 * `roundtable.down`) that `src/supervisor/monitor.ts` tells the inspection
 * stream. Keyed by monitor ref; bounded, oldest first out.
 */
import type { MonitorEvent } from '../../supervisor/events.js';
import { describeExitReason, isCleanExit } from '../../supervisor/exitReason.js';
import type { TimelineEntry } from './timeline.js';

/**
 * The monitor shell's actor id (`MONITOR_SHELL_ID` of
 * src/supervisor/monitorInspection.ts), repeated so the page bundle does not
 * pull in XState; a test checks the two are equal.
 */
export const MONITOR_SHELL_ID = 'roundtable.monitors';

/** Live monitors kept at most. */
export const MAX_MONITORS = 2000;

/** One live monitor: an edge watcher -> target. */
export interface MonitorView {
  ref: string;
  /** `null` while unknown (a callback watcher that named no actor). */
  watcherSessionId: string | null;
  targetSessionId: string | null;
  targetId: string;
  since: number;
  /**
   * True when the watcher was not named by the monitor but inferred: the
   * actor whose event was being handled when the monitor was made, or the
   * actor a DOWN with this ref was delivered to.
   */
  inferred: boolean;
}

export type MonitorMap = Record<string, MonitorView>;

/** True for the event types this fold understands. */
export function isMonitorEvent(event: { type: string }): event is MonitorEvent {
  return (
    event.type === 'roundtable.monitor' ||
    event.type === 'roundtable.demonitor' ||
    event.type === 'roundtable.down'
  );
}

/**
 * Applies one monitor event. `guess` names the watcher when the event does
 * not (see `MonitorView.inferred`).
 *
 * @example
 * ```ts
 * const edge = { ref: '#Monitor<1>', watcherSessionId: null, targetSessionId: 'x:2', targetId: 'runner' }
 * let m = applyMonitorEvent({}, { type: 'roundtable.monitor', ...edge }, 10, 'x:1')
 * m['#Monitor<1>'] // => { ...edge, watcherSessionId: 'x:1', since: 10, inferred: true }
 * applyMonitorEvent(m, { type: 'roundtable.down', reason: 'killed', ...edge }, 20, null) // => {}
 * applyMonitorEvent({}, { type: 'roundtable.monitor', ...edge, watcherSessionId: 'x:5' }, 10, 'x:1')['#Monitor<1>'].inferred // => false
 * ```
 */
export function applyMonitorEvent(
  monitors: MonitorMap,
  event: MonitorEvent,
  at: number,
  guess: string | null,
): MonitorMap {
  if (event.type !== 'roundtable.monitor') {
    if (!(event.ref in monitors)) return monitors;
    const { [event.ref]: _gone, ...rest } = monitors;
    return rest;
  }
  const next: MonitorMap = {
    ...monitors,
    [event.ref]: {
      ref: event.ref,
      watcherSessionId: event.watcherSessionId ?? guess,
      targetSessionId: event.targetSessionId,
      targetId: event.targetId,
      since: at,
      inferred: event.watcherSessionId === null && guess !== null,
    },
  };
  const keys = Object.keys(next);
  const oldest = keys[0];
  if (keys.length > MAX_MONITORS && oldest !== undefined) delete next[oldest];
  return next;
}

/**
 * Names the watcher of a monitor whose watcher was unknown (a DOWN with its
 * ref reached `sessionId`).
 *
 * @example
 * ```ts
 * const m = { '#Monitor<1>': { ref: '#Monitor<1>', watcherSessionId: null, targetSessionId: 'x:2', targetId: 'r', since: 1, inferred: false } }
 * learnWatcher(m, '#Monitor<1>', 'x:7')['#Monitor<1>'].watcherSessionId // => 'x:7'
 * learnWatcher(m, '#Monitor<9>', 'x:7') === m // => true
 * ```
 */
export function learnWatcher(monitors: MonitorMap, ref: string, sessionId: string): MonitorMap {
  const m = monitors[ref];
  if (!m || m.watcherSessionId !== null) return monitors;
  return { ...monitors, [ref]: { ...m, watcherSessionId: sessionId, inferred: true } };
}

/**
 * The timeline line of a delivered DOWN.
 *
 * @example
 * ```ts
 * const edge = { ref: '#Monitor<3>', watcherSessionId: 'x:1', targetSessionId: 'x:2', targetId: 'runner-7' }
 * downLine({ type: 'roundtable.down', reason: 'killed', ...edge }, 'runnerPool', 5) // => { at: 5, kind: 'down', subject: 'runner-7', sessionId: 'x:1', text: 'DOWN to runnerPool: killed (#Monitor<3>)', alarm: true }
 * downLine({ type: 'roundtable.down', reason: 'normal', ...edge, watcherSessionId: null }, null, 5).text // => 'DOWN to a callback: normal (#Monitor<3>)'
 * ```
 */
export function downLine(
  event: Extract<MonitorEvent, { type: 'roundtable.down' }>,
  watcherName: string | null,
  at: number,
): TimelineEntry {
  return {
    at,
    kind: 'down',
    subject: event.targetId,
    sessionId: event.watcherSessionId,
    text: `DOWN to ${watcherName ?? 'a callback'}: ${describeExitReason(event.reason)} (${event.ref})`,
    alarm: !isCleanExit(event.reason),
  };
}
