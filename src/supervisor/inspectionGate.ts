/**
 * Inspection that XState pays for only while someone looks. An observer
 * given to `createActor` makes XState build a frame for every event,
 * microstep, action and snapshot of that actor's whole system, for the
 * actor's life, whether anyone reads them or not (bench/results/inspector.md:
 * a no-op observer costs 44% of a busy tree's event rate). A gate passed as
 * a supervisor's `inspect` instead:
 *
 * - feeds its observer the cheap supervision frames always: each
 *   supervisor's shell (child started/exited, restarts) and the monitor
 *   shell (monitors, DOWNs), which happen per start and exit, not per event;
 * - keeps the live actors the tree started, and subscribes to their systems
 *   (`system.inspect`) only between `open()` and the last close, so a closed
 *   gate costs XState one `Set.size` check per frame;
 * - on open, first tells the observer every live actor, its invoked and
 *   spawned children and their current snapshots, so a viewer that connects
 *   mid-run sees the tree and states as they are now.
 */
import type { ActorRefLike, AnyActorRef, InspectionEvent, Subscription } from 'xstate';
import type { InspectObserverError } from './errors.js';
import { guardObserver, type InspectionObserver } from './guardedObserver.js';

export type { InspectionObserver } from './guardedObserver.js';

export interface InspectionGateHooks {
  /** Called on open, before the live actors are told (the collector drops what went stale). */
  onOpen?(): void;
}

/** The children an actor's snapshot lists (a machine's invoked and spawned actors). */
function childrenOf(actor: ActorRefLike): ActorRefLike[] {
  const snap = actor.getSnapshot() as { children?: Record<string, ActorRefLike | undefined> };
  if (typeof snap !== 'object' || snap === null || snap.children === undefined) return [];
  return Object.values(snap.children).filter((c): c is ActorRefLike => c !== undefined);
}

export class InspectionGate {
  /** The observer as a function: what shells and, while open, the live systems are fed. */
  readonly observer: (event: InspectionEvent) => void;
  /** Root actors the tree started that have not ended. */
  private readonly live = new Set<AnyActorRef>();
  /** Per live root while open: its system's inspection subscription. */
  private subscriptions: Map<AnyActorRef, Subscription> | null = null;
  private opens = 0;
  private tracked = false;

  /** Where the observer's throws go: the first tree's `onError` (`reportTo`), else stderr. */
  private onThrow: ((error: InspectObserverError) => void) | undefined;

  constructor(
    observer: InspectionObserver,
    private readonly hooks: InspectionGateHooks = {},
  ) {
    // Fed from inside the actors' steps, where a throw would fail the actor (guardedObserver.ts).
    this.observer = guardObserver(observer, (error) =>
      this.onThrow === undefined ? console.error(error) : this.onThrow(error),
    );
  }

  /**
   * @internal A tree was handed this gate: its observer's throws go to that
   * tree's `onError` (the first tree's, when several share one gate).
   */
  reportTo(onError: (error: InspectObserverError) => void): void {
    this.onThrow ??= onError;
  }

  /** Whether anyone looks (between the first `open()` and the last close). */
  get isOpen(): boolean {
    return this.subscriptions !== null;
  }

  /** Whether a supervisor has ever handed the gate an actor (it is some tree's `inspect`). */
  get inUse(): boolean {
    return this.tracked;
  }

  /** Live root actors known to the gate (for tests and stats). */
  get size(): number {
    return this.live.size;
  }

  /**
   * Someone starts looking: every live actor is told, then followed. Returns
   * the close; the gate closes when every open has been closed.
   */
  open(): () => void {
    this.opens += 1;
    if (this.subscriptions === null) {
      this.subscriptions = new Map();
      this.hooks.onOpen?.();
      for (const actor of this.live) this.follow(actor);
    }
    let closed = false;
    return () => {
      if (closed) return;
      closed = true;
      this.opens -= 1;
      if (this.opens > 0 || this.subscriptions === null) return;
      for (const s of this.subscriptions.values()) s.unsubscribe();
      this.subscriptions = null;
    };
  }

  /**
   * @internal A supervisor created `actor` (a root of its own system) and
   * is about to start it. While open it is followed from now; `started`
   * then tells what its start created.
   */
  track(actor: AnyActorRef): void {
    this.live.add(actor);
    this.tracked = true;
    if (this.subscriptions === null) return;
    this.announce(actor);
    this.subscriptions.set(actor, actor.system.inspect(this.observer));
  }

  /** @internal `actor` started: while open, the children its initial state made are told. */
  started(actor: AnyActorRef): void {
    if (this.subscriptions === null) return;
    for (const child of childrenOf(actor)) this.tell(child);
  }

  /**
   * @internal `actor` ended: it is no longer followed. XState tells its
   * observers an actor completed or failed (the supervisor's, which call
   * this) before it sends the inspection frame of that last snapshot, so the
   * frame would reach nobody once unsubscribed: while open, the final
   * snapshot (`done` with its output and final state, `error`, `stopped`)
   * is told here first.
   */
  untrack(actor: AnyActorRef): void {
    this.live.delete(actor);
    const sub = this.subscriptions?.get(actor);
    if (sub === undefined) return;
    this.observer({
      type: '@xstate.snapshot',
      actorRef: actor,
      rootId: rootIdOf(actor),
      snapshot: actor.getSnapshot(),
      event: { type: 'roundtable.inspect.ended' },
    });
    sub.unsubscribe();
    this.subscriptions?.delete(actor);
  }

  private follow(actor: AnyActorRef): void {
    this.tell(actor);
    this.subscriptions?.set(actor, actor.system.inspect(this.observer));
  }

  /** What XState would have said of `actor` had it been watched: it exists, and its snapshot. */
  private tell(actor: ActorRefLike): void {
    this.announce(actor);
    const ref = actor as AnyActorRef;
    this.observer({
      type: '@xstate.snapshot',
      actorRef: ref,
      rootId: rootIdOf(ref),
      snapshot: actor.getSnapshot(),
      event: { type: 'roundtable.inspect.attached' },
    });
    for (const child of childrenOf(actor)) this.tell(child);
  }

  private announce(actor: ActorRefLike): void {
    const ref = actor as AnyActorRef;
    this.observer({ type: '@xstate.actor', actorRef: ref, rootId: rootIdOf(ref) });
  }
}

/** The sessionId of the root of `actor`'s system (XState's `rootId`). */
function rootIdOf(actor: AnyActorRef): string {
  let a: AnyActorRef = actor;
  while (a._parent !== undefined) a = a._parent;
  return a.sessionId;
}

/** The observer a shell (always fed) uses: the gate's, or the plain observer itself. */
export function shellObserver(
  inspect: InspectionObserver | InspectionGate | undefined,
): InspectionObserver | undefined {
  return inspect instanceof InspectionGate ? inspect.observer : inspect;
}
