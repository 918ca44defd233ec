/**
 * The RunnerPool actor: the node's view of who holds a runner slot here.
 * The database decides every grant (the dispatch tick, src/db/tick.ts); what
 * stays in memory is only what a node needs that rows cannot give: which
 * live actor holds each slot this node was granted, watched with a monitor,
 * so that a holder's death is a DOWN message and its slot goes back in the
 * next tick (seed: "a waiter that dies is noticed through a monitor").
 *
 * No I/O here: `onDown` is the runtime's (it asks the dispatcher to release
 * the slot unless a restarted runner holds it again first).
 */
import { setup } from 'xstate';
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
  | DownEvent;

export interface RunnerPoolContext {
  /** Session -> the monitor on its holder. Mutated in place: the table is the actor's own. */
  holders: Map<string, { holder: Watchable; ref: MonitorRef }>;
  bySessionRef: Map<MonitorRef, string>;
  input: RunnerPoolInput;
}

const monitorOf = (ctx: RunnerPoolContext) => ctx.input.monitor ?? supervisorMonitor;

function unwatch(ctx: RunnerPoolContext, sessionId: string): void {
  const h = ctx.holders.get(sessionId);
  if (h === undefined) return;
  monitorOf(ctx).demonitor(h.ref, { flush: true });
  ctx.bySessionRef.delete(h.ref);
  ctx.holders.delete(sessionId);
}

/** Takes back every monitor (the pool is stopping; its holders outlive it). */
export function forgetHolders(ctx: RunnerPoolContext): void {
  for (const id of [...ctx.holders.keys()]) unwatch(ctx, id);
}

export const runnerPoolMachine = setup({
  types: {
    context: {} as RunnerPoolContext,
    events: {} as RunnerPoolEvent,
    input: {} as RunnerPoolInput,
  },
  actions: {
    hold: ({ context: ctx, event, self }) => {
      if (event.type !== 'roundtable.pool.hold') return;
      if (ctx.holders.get(event.sessionId)?.holder === event.holder) return;
      unwatch(ctx, event.sessionId);
      // A stopped pool (restarted by its supervisor) cannot take back its
      // monitors: their late DOWNs are dropped rather than sent to a corpse.
      const watcher = {
        send: (down: DownEvent) => {
          if (self.getSnapshot().status === 'active') self.send(down);
        },
      };
      const ref = monitorOf(ctx).monitor(watcher, event.holder);
      ctx.holders.set(event.sessionId, { holder: event.holder, ref });
      ctx.bySessionRef.set(ref, event.sessionId);
    },
    release: ({ context: ctx, event }) => {
      if (event.type === 'roundtable.pool.release') unwatch(ctx, event.sessionId);
    },
    down: ({ context: ctx, event }) => {
      if (event.type !== 'DOWN') return;
      // A DOWN for a monitor already taken back is stale: ignore it.
      const sessionId = ctx.bySessionRef.get(event.ref);
      if (sessionId === undefined) return;
      ctx.bySessionRef.delete(event.ref);
      ctx.holders.delete(sessionId);
      ctx.input.onDown(sessionId, event.reason);
    },
  },
}).createMachine({
  id: 'runnerPool',
  context: ({ input }) => ({ holders: new Map(), bySessionRef: new Map(), input }),
  exit: ({ context }) => forgetHolders(context),
  // One state: the pool decides nothing (the tick does), it only watches.
  // Named, so an inspector has a state to light.
  initial: 'ready',
  states: {
    ready: {
      on: {
        'roundtable.pool.hold': { actions: 'hold' },
        'roundtable.pool.release': { actions: 'release' },
        DOWN: { actions: 'down' },
      },
    },
  },
});

/** Sessions whose holder the pool watches now. */
export function heldSessions(snapshot: { context: RunnerPoolContext }): string[] {
  return [...snapshot.context.holders.keys()];
}
