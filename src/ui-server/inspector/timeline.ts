/**
 * Which inspection frames are system events worth a line on the timeline:
 * supervisor events (starts, exits, restarts, intensity, shutdowns), slot
 * grants to TaskRunners, and give-ups (a run's `gave_up` output). Pure, so
 * the list is tested and documented in one place.
 */

import { isSupervisorEvent } from '../../supervisor/events.js';
import { describeExitReason, isCleanExit } from '../../supervisor/exitReason.js';

export type TimelineKind =
  | 'start'
  | 'exit'
  | 'restart'
  | 'give_up'
  | 'intensity'
  | 'shutdown'
  | 'grant'
  | 'down';

/** One line of the timeline. */
export interface TimelineEntry {
  at: number;
  kind: TimelineKind;
  /** Who it is about: `supervisor/child`, or the actor's id. */
  subject: string;
  /** The actor it concerns, when known. */
  sessionId: string | null;
  text: string;
  /** True for exits that are not clean, intensity trips and give-ups. */
  alarm: boolean;
}

/** The fields of an `@xstate.event` frame the classifier reads. */
export interface EventFrame {
  kind: 'event';
  /** The receiving actor's id and sessionId. */
  actorId: string;
  sessionId: string;
  event: { type: string } & Record<string, unknown>;
}

/** The fields of an `@xstate.snapshot` frame the classifier reads. */
export interface SnapshotFrame {
  kind: 'snapshot';
  actorId: string;
  sessionId: string;
  status: string;
  output: unknown;
}

/**
 * @example
 * ```ts
 * const ev = (event) => ({ kind: 'event', actorId: 'root', sessionId: 's:1', event })
 * classifyFrame(ev({ type: 'roundtable.child.exited', supervisorId: 'root', childId: 'pool', reason: 'killed' }), 5) // => { at: 5, kind: 'exit', subject: 'root/pool', sessionId: null, text: 'exited: killed', alarm: true }
 * classifyFrame(ev({ type: 'roundtable.child.restarting', supervisorId: 'root', childId: 'pool', delayMs: 250 }), 5).text // => 'restarting in 250 ms'
 * classifyFrame(ev({ type: 'roundtable.supervisor.intensity_reached', supervisorId: 'root', intensity: 3, periodMs: 5000 }), 5).text // => 'intensity reached: more than 3 restarts in 5000 ms'
 * classifyFrame({ kind: 'event', actorId: 'pool', sessionId: 'x:9', event: { type: 'roundtable.pool.hold', sessionId: 'sess-1' } }, 5).kind // => 'grant'
 * classifyFrame({ kind: 'snapshot', actorId: 'run', sessionId: 'x:4', status: 'done', output: { outcome: 'gave_up', reason: 'container_replaced' } }, 5).text // => 'gave up: container_replaced'
 * classifyFrame({ kind: 'event', actorId: 'w', sessionId: 'x:2', event: { type: 'tick' } }, 5) // => null
 * ```
 */
export function classifyFrame(frame: EventFrame | SnapshotFrame, at: number): TimelineEntry | null {
  if (frame.kind === 'snapshot') {
    if (frame.status !== 'done') return null;
    const out = frame.output as { outcome?: unknown; reason?: unknown } | null | undefined;
    if (out?.outcome !== 'gave_up') return null;
    return {
      at,
      kind: 'give_up',
      subject: frame.actorId,
      sessionId: frame.sessionId,
      text: `gave up: ${String(out.reason)}`,
      alarm: true,
    };
  }
  const e = frame.event;
  // A runner holding its session's slot: the tick granted it (or an adopt fenced it).
  if (e.type === 'roundtable.pool.hold') {
    return {
      at,
      kind: 'grant',
      // The runner holding the slot (its child id is the session id), not the pool it told.
      subject: typeof e.sessionId === 'string' ? e.sessionId : frame.actorId,
      sessionId: frame.sessionId,
      text: `slot held${typeof e.sessionId === 'string' ? ` for session ${e.sessionId}` : ''}`,
      alarm: false,
    };
  }
  if (!isSupervisorEvent(e)) return null;
  const child = 'childId' in e ? `${e.supervisorId}/${e.childId}` : e.supervisorId;
  switch (e.type) {
    case 'roundtable.child.started':
      return {
        at,
        kind: 'start',
        subject: child,
        sessionId: e.sessionId,
        text: e.restartCount === 0 ? 'started' : `restarted (restart #${e.restartCount})`,
        alarm: false,
      };
    case 'roundtable.child.exited': {
      const text = `exited: ${describeExitReason(e.reason)}`;
      return {
        at,
        kind: 'exit',
        subject: child,
        sessionId: null,
        text,
        alarm: !isCleanExit(e.reason),
      };
    }
    case 'roundtable.child.restarting':
      return {
        at,
        kind: 'restart',
        subject: child,
        sessionId: null,
        text: e.delayMs > 0 ? `restarting in ${e.delayMs} ms` : 'restarting',
        alarm: false,
      };
    case 'roundtable.child.backoff_exhausted':
      return {
        at,
        kind: 'give_up',
        subject: child,
        sessionId: null,
        text: 'gave up: backoff restarts exhausted',
        alarm: true,
      };
    case 'roundtable.supervisor.intensity_reached':
      return {
        at,
        kind: 'intensity',
        subject: child,
        sessionId: frame.sessionId,
        text: `intensity reached: more than ${e.intensity} restarts in ${e.periodMs} ms`,
        alarm: true,
      };
    case 'roundtable.supervisor.shutdown':
      return {
        at,
        kind: 'shutdown',
        subject: child,
        sessionId: frame.sessionId,
        text: `shut down: ${describeExitReason(e.reason)}`,
        alarm: false,
      };
  }
}
