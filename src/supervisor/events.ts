/**
 * The supervisor's typed system events. Subscribers get them as objects; an
 * `inspect` observer sees them as `@xstate.event` frames whose event type is
 * one of these, sent to the supervisor's own (tiny) actor, whose snapshot
 * holds the tree: enough for an inspector to draw it.
 */
import type { ExitReason } from './exitReason.js';

export type SupervisorEvent =
  | {
      type: 'roundtable.child.started';
      supervisorId: string;
      childId: string;
      /** The child actor's XState sessionId (a nested supervisor's own sessionId). */
      sessionId: string;
      restartCount: number;
    }
  | { type: 'roundtable.child.exited'; supervisorId: string; childId: string; reason: ExitReason }
  | {
      type: 'roundtable.child.restarting';
      supervisorId: string;
      childId: string;
      delayMs: number;
    }
  | { type: 'roundtable.child.backoff_exhausted'; supervisorId: string; childId: string }
  | {
      type: 'roundtable.supervisor.intensity_reached';
      supervisorId: string;
      intensity: number;
      periodMs: number;
    }
  | { type: 'roundtable.supervisor.shutdown'; supervisorId: string; reason: ExitReason };

/** True for a {@link SupervisorEvent}'s type (`roundtable.child.*`, `roundtable.supervisor.*`). */
export function isSupervisorEvent(event: { type: string }): event is SupervisorEvent {
  return (
    event.type.startsWith('roundtable.child.') || event.type.startsWith('roundtable.supervisor.')
  );
}

/**
 * What monitors tell an inspector (docs/supervision.md, "Monitors"): one
 * `roundtable.monitor` per monitor, then either `roundtable.down` (the DOWN
 * was delivered) or `roundtable.demonitor` (taken back, a DOWN flushed
 * included). Sent to the observer's monitor shell actor, never to the
 * watcher or the target. A sessionId is `null` when that side is not an
 * actor (a callback watcher that names no `sessionId`).
 */
export type MonitorEvent =
  | ({ type: 'roundtable.monitor' } & MonitorEdge)
  | ({ type: 'roundtable.demonitor' } & MonitorEdge)
  | ({ type: 'roundtable.down'; reason: ExitReason } & MonitorEdge);

/** Who watches whom, in a monitor event. */
export interface MonitorEdge {
  ref: `#Monitor<${number}>`;
  watcherSessionId: string | null;
  targetSessionId: string | null;
  /** The target's id (what DOWN names). */
  targetId: string;
}

/** The event a child must handle to take part in a graceful shutdown. */
export const SHUTDOWN_EVENT = { type: 'roundtable.shutdown' } as const;
export type ShutdownEvent = typeof SHUTDOWN_EVENT;
