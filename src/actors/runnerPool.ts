/**
 * The RunnerPool actor: the node's view of who holds a runner slot here.
 * The database decides every grant (the dispatch tick, src/db/tick.ts); what
 * stays in memory is only what a node needs that rows cannot give: which
 * live actor holds each slot this node was granted, watched with a monitor,
 * so that a holder's death is a DOWN message and its slot goes back in the
 * next tick (seed: "a waiter that dies is noticed through a monitor").
 *
 * The context is data only (which session is held, under which hold
 * number), changed by pure `assign`s, so a snapshot is JSON. The monitors
 * themselves are effects: each incarnation's are kept in a table of its own
 * (`HolderWatch`), opened on entry, used by the actions that watch or stop
 * watching, and taken back on exit. A DOWN comes back as the pool's own
 * event, carrying the hold number it was for: one from a hold that was
 * since released or replaced fails the guard and is dropped.
 *
 * No I/O here: `onDown` is the runtime's (it asks the dispatcher to release
 * the slot unless a restarted runner holds it again first).
 */
import { type AnyActorRef, assign, setup } from 'xstate';
import { type DownEvent, demonitor, type MonitorRef, monitor } from '../supervisor/monitor.js';
import type { Watchable } from '../supervisor/watchExit.js';

/** How the pool watches holders; the supervisor's monitor by default. */
export interface PoolMonitor {
  monitor(watcher: { send(event: DownEvent): void }, target: Watchable): MonitorRef;
  demonitor(ref: MonitorRef, options: { flush: boolean }): boolean;
}

export const supervisorMonitor: PoolMonitor = { monitor, demonitor };

export interface RunnerPoolInput {
  monitor?: PoolMonitor;
  /** A holder died (DOWN) while holding `sessionId`. Must not call the pool back synchronously. */
  onDown(sessionId: string, reason: DownEvent['reason']): void;
}

export type RunnerPoolEvent =
  /** A runner holds the slot of `sessionId` (granted to this node, adopted, or re-held after a pool restart). */
  | { type: 'roundtable.pool.hold'; sessionId: string; holder: Watchable }
  /** The runner is done with it (finished, cancelled, gone). Idempotent. */
  | { type: 'roundtable.pool.release'; sessionId: string }
  /** A holder's DOWN, for the hold numbered `hold`: sent by the pool's own monitors. */
  | { type: 'roundtable.pool.down'; sessionId: string; hold: number; reason: DownEvent['reason'] };

export interface RunnerPoolContext {
  /** Held session -> the number of the hold its monitor belongs to. */
  held: Readonly<Record<string, number>>;
  /** Holds numbered so far; the next is `holds + 1`. */
  holds: number;
}

/** One incarnation's monitors: the effects behind the context's numbers. */
class HolderWatch {
  private readonly refs = new Map<string, MonitorRef>();
  private readonly monitor: PoolMonitor;

  constructor(
    private readonly input: RunnerPoolInput,
    private readonly self: AnyActorRef,
  ) {
    this.monitor = input.monitor ?? supervisorMonitor;
  }

  watch(sessionId: string, holder: Watchable, hold: number): void {
    this.unwatch(sessionId);
    const self = this.self;
    // A stopped pool (restarted by its supervisor) cannot take back its
    // monitors in time for a DOWN already on its way: it is dropped rather
    // than sent to a corpse. It names the pool, so an inspector draws the
    // monitor from the pool even when nobody watched it being made.
    const watcher = {
      sessionId: self.sessionId,
      send: (down: DownEvent) => {
        if (self.getSnapshot().status !== 'active') return;
        self.send({ type: 'roundtable.pool.down', sessionId, hold, reason: down.reason });
      },
    };
    this.refs.set(sessionId, this.monitor.monitor(watcher, holder));
  }

  unwatch(sessionId: string): void {
    const ref = this.refs.get(sessionId);
    if (ref === undefined) return;
    this.monitor.demonitor(ref, { flush: true });
    this.refs.delete(sessionId);
  }

  /** The monitor fired: it is gone already, only the runtime is told. */
  down(sessionId: string, reason: DownEvent['reason']): void {
    this.refs.delete(sessionId);
    this.input.onDown(sessionId, reason);
  }

  /** Takes back every monitor (the pool is stopping; its holders outlive it). */
  close(): void {
    for (const sessionId of [...this.refs.keys()]) this.unwatch(sessionId);
  }
}

const watches = new WeakMap<AnyActorRef, HolderWatch>();

/** The table opened on entry; a pool always has one while it handles events. */
function watchOf(self: AnyActorRef): HolderWatch {
  const w = watches.get(self);
  if (w === undefined) throw new Error('runnerPool: an event before its entry');
  return w;
}

/**
 * The input, from the init event the root's entry sees (`xstate.init`
 * carries it; xstate's types give entry only the machine's own events).
 */
function inputOf(event: unknown): RunnerPoolInput {
  if (typeof event === 'object' && event !== null && 'input' in event) {
    return event.input as RunnerPoolInput;
  }
  throw new Error('runnerPool: started without its input');
}

/**
 * A copy of `held`, without `skip`. Built as a dictionary (no prototype):
 * every session id is a new key, and a spread copy of a literal gives each
 * key a hidden class of its own, ~30 µs per job with 20 held (a copy per
 * hold and per release). Still plain data: JSON reads and writes it alike.
 */
function copyHeld(held: Readonly<Record<string, number>>, skip?: string): Record<string, number> {
  const out: Record<string, number> = Object.create(null);
  for (const id in held) if (id !== skip) out[id] = held[id] as number;
  return out;
}

export const runnerPoolMachine = setup({
  types: {
    context: {} as RunnerPoolContext,
    events: {} as RunnerPoolEvent,
    input: {} as RunnerPoolInput,
  },
  actions: {
    open: ({ self }, input: RunnerPoolInput) => {
      watches.set(self, new HolderWatch(input, self));
    },
    close: ({ self }) => {
      watches.get(self)?.close();
      watches.delete(self);
    },
    numberHold: assign(({ context, event }) => {
      if (event.type !== 'roundtable.pool.hold') return {};
      const hold = context.holds + 1;
      const held = copyHeld(context.held);
      held[event.sessionId] = hold;
      return { holds: hold, held };
    }),
    // After `numberHold`: the monitor carries the number just assigned.
    watch: ({ context, event, self }) => {
      if (event.type !== 'roundtable.pool.hold') return;
      watchOf(self).watch(event.sessionId, event.holder, context.held[event.sessionId] ?? 0);
    },
    unwatch: ({ event, self }) => {
      if (event.type === 'roundtable.pool.release') watchOf(self).unwatch(event.sessionId);
    },
    forget: assign(({ context, event }) =>
      event.type === 'roundtable.pool.hold'
        ? {}
        : { held: copyHeld(context.held, event.sessionId) },
    ),
    tellDown: ({ event, self }) => {
      if (event.type === 'roundtable.pool.down') watchOf(self).down(event.sessionId, event.reason);
    },
  },
  guards: {
    currentHold: ({ context, event }) =>
      event.type === 'roundtable.pool.down' && context.held[event.sessionId] === event.hold,
  },
}).createMachine({
  id: 'runnerPool',
  context: { held: {}, holds: 0 },
  entry: { type: 'open', params: ({ event }) => inputOf(event) },
  exit: 'close',
  // One state: the pool decides nothing (the tick does), it only watches.
  // Named, so an inspector has a state to light.
  initial: 'ready',
  states: {
    ready: {
      on: {
        'roundtable.pool.hold': { actions: ['numberHold', 'watch'] },
        'roundtable.pool.release': { actions: ['unwatch', 'forget'] },
        'roundtable.pool.down': { guard: 'currentHold', actions: ['forget', 'tellDown'] },
      },
    },
  },
});

/** Sessions whose holder the pool watches now. */
export function heldSessions(snapshot: { context: RunnerPoolContext }): string[] {
  return Object.keys(snapshot.context.held);
}
