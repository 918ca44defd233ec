/**
 * The inspection observer: what XState reports of every actor, kept as a
 * bounded index. Nothing is serialised here; the hub reads the latest
 * snapshot references when (and only if) a viewer asks, so with nobody
 * watching a frame costs a map lookup and a ring write.
 */
import type { ActorRefLike, InspectionEvent } from 'xstate';
import { isSupervisorEvent, type MonitorEvent } from '../../supervisor/events.js';
import { isCleanExit } from '../../supervisor/exitReason.js';
import {
  applyMonitorEvent,
  downLine,
  isMonitorEvent,
  learnWatcher,
  MONITOR_SHELL_ID,
} from './inspectorMonitors.js';
import { applySupervisorEvent, EMPTY_TREE, type InspectorTree } from './inspectorTree.js';
import { Ring } from './Ring.js';
import { classifyFrame, type TimelineEntry } from './timeline.js';

/** One event an actor received. `event` is the live object; serialise only to send. */
export interface EventEntry {
  at: number;
  type: string;
  sourceId: string | null;
  event: unknown;
}

/** What we know of one actor incarnation. */
export interface ActorRecord {
  readonly sessionId: string;
  readonly id: string;
  readonly parentId: string | null;
  readonly systemId: string | null;
  readonly logic: unknown;
  /** A supervisor's shell actor (it received `roundtable.*` supervisor events). */
  supervisor: boolean;
  snapshot: unknown;
  status: string;
  readonly events: Ring<EventEntry>;
  /** Bumped on every snapshot and event: a viewer compares it with what it sent. */
  version: number;
}

export interface CollectorOptions {
  clock: { now(): number };
  /** Events kept per actor. */
  eventsPerActor: number;
  /** Timeline entries kept. */
  timelineSize: number;
  /** Actor records kept at most; dead ones are evicted first. */
  maxActors: number;
  /** Dead actors kept for a look after they end. */
  keepDead: number;
}

export const COLLECTOR_DEFAULTS: Omit<CollectorOptions, 'clock'> = {
  eventsPerActor: 20,
  timelineSize: 500,
  maxActors: 5000,
  keepDead: 200,
};

const DEAD = new Set(['done', 'error', 'stopped']);

type InspectorActorRef = ActorRefLike & {
  id?: string;
  _parent?: { sessionId: string };
  logic?: unknown;
  systemId?: string;
};

export class InspectionCollector {
  readonly actors = new Map<string, ActorRecord>();
  /** Live supervisors' inspection shells by sessionId: how the exit API reaches a supervisor. */
  readonly shells = new Map<string, ActorRefLike>();
  readonly timeline: Ring<TimelineEntry>;
  tree: InspectorTree = EMPTY_TREE;
  /** Bumped when the tree or the set (or status) of actors changes. */
  treeVersion = 0;
  /** Set by the hub while someone watches; called after every recorded change. */
  changed: (() => void) | null = null;
  readonly limits: { eventsPerActor: number; timelineSize: number };
  private readonly dead: string[] = [];
  private readonly opts: CollectorOptions;
  private counts = { frames: 0, evicted: 0, observerErrors: 0 };
  /**
   * The actor the last frame delivered an event to, while nothing else has
   * happened since: a monitor made now, by a callback that names no actor,
   * was made while that actor handled the event (a watcher inferred).
   */
  private lastEventTo: string | null = null;
  private lastError: unknown;

  constructor(options: Partial<CollectorOptions> & Pick<CollectorOptions, 'clock'>) {
    this.opts = { ...COLLECTOR_DEFAULTS, ...options };
    this.limits = {
      eventsPerActor: this.opts.eventsPerActor,
      timelineSize: this.opts.timelineSize,
    };
    this.timeline = new Ring(this.opts.timelineSize);
  }

  /** The XState inspection observer. Never throws into XState: a failure is counted and kept. */
  readonly observer = (ev: InspectionEvent): void => {
    this.counts.frames += 1;
    try {
      if ((ev.actorRef as InspectorActorRef).id === MONITOR_SHELL_ID) {
        // The monitor shell is bookkeeping, not an actor worth a row.
        if (ev.type === '@xstate.event' && isMonitorEvent(ev.event)) {
          this.onMonitorEvent(ev.event);
          this.changed?.();
        }
        return;
      }
      this.track(ev);
      switch (ev.type) {
        case '@xstate.actor':
          this.record(ev.actorRef);
          break;
        case '@xstate.event':
          this.onEvent(ev.actorRef, ev.event, ev.sourceRef);
          break;
        case '@xstate.snapshot':
          this.onSnapshot(ev.actorRef, ev.snapshot);
          break;
        default:
          return;
      }
      this.changed?.();
    } catch (error) {
      // An inspector bug must not crash the actors it watches; it is kept and
      // reported through stats() and to viewers.
      this.counts.observerErrors += 1;
      this.lastError = error;
    }
  };

  /**
   * A gate opens (InspectionGate): the live actors are told again next, so
   * records of actors that were live when the last viewer left are dropped
   * (they may have ended unseen); supervisors' shells, always fed, and the
   * dead kept for a look stay.
   */
  resync(): void {
    for (const [id, rec] of this.actors) {
      if (rec.supervisor || DEAD.has(rec.status)) continue;
      this.actors.delete(id);
    }
    this.treeVersion += 1;
  }

  stats(): {
    frames: number;
    actors: number;
    evicted: number;
    observerErrors: number;
    lastError: unknown;
  } {
    return { ...this.counts, actors: this.actors.size, lastError: this.lastError };
  }

  private track(ev: InspectionEvent): void {
    const to = ev.actorRef.sessionId;
    if (ev.type === '@xstate.event') {
      this.lastEventTo = to;
      const e = ev.event as { type: string; ref?: unknown };
      // A DOWN names its monitor: its receiver is the watcher.
      if (e.type === 'DOWN' && typeof e.ref === 'string' && e.ref in this.tree.monitors) {
        this.tree = { ...this.tree, monitors: learnWatcher(this.tree.monitors, e.ref, to) };
        this.treeVersion += 1;
      }
    } else if (ev.type !== '@xstate.microstep' && ev.type !== '@xstate.action') {
      this.lastEventTo = null;
    } else if (to !== this.lastEventTo) this.lastEventTo = null;
  }

  private onMonitorEvent(event: MonitorEvent): void {
    const at = this.opts.clock.now();
    if (event.type === 'roundtable.down') {
      const watcher =
        event.watcherSessionId ?? this.tree.monitors[event.ref]?.watcherSessionId ?? null;
      const name = watcher === null ? null : (this.actors.get(watcher)?.id ?? watcher);
      this.timeline.push(downLine({ ...event, watcherSessionId: watcher }, name, at));
    }
    const guess = event.type === 'roundtable.monitor' ? this.lastEventTo : null;
    this.tree = { ...this.tree, monitors: applyMonitorEvent(this.tree.monitors, event, at, guess) };
    this.treeVersion += 1;
  }

  private record(ref: ActorRefLike): ActorRecord {
    const existing = this.actors.get(ref.sessionId);
    if (existing) return existing;
    const r = ref as InspectorActorRef;
    const rec: ActorRecord = {
      sessionId: ref.sessionId,
      id: r.id ?? ref.sessionId,
      parentId: r._parent?.sessionId ?? null,
      systemId: r.systemId ?? null,
      logic: r.logic,
      supervisor: false,
      snapshot: undefined,
      status: 'active',
      events: new Ring(this.opts.eventsPerActor),
      version: 0,
    };
    this.actors.set(rec.sessionId, rec);
    this.treeVersion += 1;
    if (this.actors.size > this.opts.maxActors) this.evictOne();
    return rec;
  }

  private evictOne(): void {
    const victim = this.dead.shift() ?? this.actors.keys().next().value;
    if (victim !== undefined && this.actors.delete(victim)) this.counts.evicted += 1;
  }

  private onEvent(
    ref: ActorRefLike,
    event: { type: string } & Record<string, unknown>,
    source: ActorRefLike | undefined,
  ): void {
    const rec = this.record(ref);
    const at = this.opts.clock.now();
    rec.events.push({ at, type: event.type, sourceId: source?.sessionId ?? null, event });
    rec.version += 1;
    if (isSupervisorEvent(event)) {
      rec.supervisor = true;
      if (event.type === 'roundtable.supervisor.shutdown') this.shells.delete(rec.sessionId);
      else this.shells.set(rec.sessionId, ref);
      if (event.type === 'roundtable.child.exited') {
        // XState reports no snapshot when an actor errors; the exit is our news.
        const child = this.tree.supervisors[rec.sessionId]?.children.find(
          (c) => c.id === event.childId,
        );
        const gone = child?.sessionId ? this.actors.get(child.sessionId) : undefined;
        if (gone) this.markDead(gone, isCleanExit(event.reason) ? 'stopped' : 'error');
      }
      this.tree = applySupervisorEvent(this.tree, rec.sessionId, event, at);
      this.treeVersion += 1;
    }
    // Most events are ordinary: skip building a frame for them.
    if (!event.type.startsWith('roundtable.')) return;
    const line = classifyFrame(
      { kind: 'event', actorId: rec.id, sessionId: rec.sessionId, event },
      at,
    );
    if (line) this.timeline.push(line);
  }

  /** Returns false when it was already dead (`done` is followed by `stopped`: one death). */
  private markDead(rec: ActorRecord, status: string): boolean {
    const was = rec.status;
    rec.status = status;
    rec.version += 1;
    this.treeVersion += 1;
    if (DEAD.has(was)) return false;
    this.forgetMonitorsOf(rec.sessionId);
    this.dead.push(rec.sessionId);
    const gone = this.dead.length > this.opts.keepDead ? this.dead.shift() : undefined;
    if (gone !== undefined && this.actors.delete(gone)) this.counts.evicted += 1;
    return true;
  }

  /**
   * An ended watcher monitors nothing (Erlang drops a dead process's
   * monitors); a callback that forwarded to it may still hold the monitor
   * until the target exits, but the edge is no longer worth drawing.
   */
  private forgetMonitorsOf(sessionId: string): void {
    const monitors = this.tree.monitors;
    let kept: typeof monitors | null = null;
    for (const [ref, m] of Object.entries(monitors)) {
      if (m.watcherSessionId !== sessionId) continue;
      kept ??= { ...monitors };
      delete kept[ref];
    }
    if (kept !== null) this.tree = { ...this.tree, monitors: kept };
  }

  private onSnapshot(ref: ActorRefLike, snapshot: unknown): void {
    const rec = this.record(ref);
    const s = snapshot as { status?: string; output?: unknown };
    const status = s.status ?? 'active';
    rec.snapshot = snapshot;
    rec.version += 1;
    if (status === rec.status) return;
    if (!DEAD.has(status)) {
      rec.status = status;
      this.treeVersion += 1;
      return;
    }
    if (!this.markDead(rec, status)) return;
    const line = classifyFrame(
      { kind: 'snapshot', actorId: rec.id, sessionId: rec.sessionId, status, output: s.output },
      this.opts.clock.now(),
    );
    if (line) this.timeline.push(line);
  }
}
