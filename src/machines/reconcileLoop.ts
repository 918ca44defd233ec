/**
 * The Reconciler's loop as a statechart: one pass at boot, then one every
 * `periodMs` on the actor system's clock, and one whenever a tick
 * (`roundtable.reconciler.tick`, namespaced like the supervisor's events)
 * arrives (tests and `runtime.reconcile()` send it, as Oban's `:rescue`).
 * Passes never overlap: a tick during a pass asks for one more pass after it.
 *
 * The pass itself is the provided `pass` actor; a failed pass is reported
 * through the provided `report` action and the loop goes on: a database
 * outage must not take the Reconciler, a permanent child, down with it.
 *
 * Every `done` is answered: by the pass that covers its tick, or, if the
 * loop is stopped first, with a ReconcilerStoppedError. XState runs no exit
 * action on stop, but it does stop invoked children, so a root-level child
 * (`answerOnStop`) does it from its cleanup, reading the callers still in
 * the loop's context. An actor that errors or was never running cannot
 * answer: a caller that must hear back watches the actor too (the
 * Reconciler's `requestPass`).
 */
import { type AnyActorRef, assign, fromCallback, fromPromise, setup } from 'xstate';

export interface ReconcileLoopInput {
  periodMs: number;
}

/** `done` is called once the pass that covers this tick has finished. */
export type ReconcileLoopEvent = {
  type: 'roundtable.reconciler.tick';
  done?: (error?: unknown) => void;
};

/** The loop ended before the pass covering a tick finished. */
export class ReconcilerStoppedError extends Error {
  override readonly name = 'ReconcilerStoppedError';
  readonly code = 'RECONCILER_STOPPED';
}

// Exported so the declaration of reconcilerLogic (src/actors) can name it in dist/.
export interface Context {
  periodMs: number;
  boot: boolean;
  /** Callers of ticks that the running pass does not cover yet. */
  waiting: Array<(error?: unknown) => void>;
  /** Callers the running pass covers. */
  covered: Array<(error?: unknown) => void>;
}

export const reconcileLoopMachine = setup({
  types: {
    input: {} as ReconcileLoopInput,
    context: {} as Context,
    events: {} as ReconcileLoopEvent,
  },
  actors: {
    pass: fromPromise<void, { boot: boolean }>(async () => {
      throw new Error("reconcileLoop: provide the 'pass' actor");
    }),
    // Lives as long as the loop; stopping the loop stops it, and its cleanup
    // answers every caller the loop still holds.
    answerOnStop: fromCallback<{ type: never }, { loop: AnyActorRef }>(({ input }) => () => {
      const { waiting, covered } = (input.loop.getSnapshot() as { context: Context }).context;
      const error = new ReconcilerStoppedError(
        'the reconciler stopped before the pass covering this tick finished',
      );
      for (const done of [...covered, ...waiting]) done(error);
    }),
  },
  actions: {
    report: (_: unknown, _params: { error: unknown }) => {},
    settle: (
      _: unknown,
      params: { callers: Array<(error?: unknown) => void>; error?: unknown },
    ) => {
      for (const done of params.callers) done(params.error);
    },
  },
  delays: { periodMs: ({ context }) => context.periodMs },
  guards: { ticked: ({ context }) => context.waiting.length > 0 },
}).createMachine({
  id: 'reconciler',
  context: ({ input }) => ({ periodMs: input.periodMs, boot: true, waiting: [], covered: [] }),
  initial: 'reconciling',
  invoke: { src: 'answerOnStop', input: ({ self }) => ({ loop: self }) },
  states: {
    idle: {
      after: { periodMs: { target: 'reconciling' } },
      on: {
        'roundtable.reconciler.tick': {
          target: 'reconciling',
          actions: assign({
            waiting: ({ context, event }) =>
              event.done ? [...context.waiting, event.done] : context.waiting,
          }),
        },
      },
    },
    reconciling: {
      entry: assign(({ context }) => ({ covered: context.waiting, waiting: [] })),
      on: {
        'roundtable.reconciler.tick': {
          actions: assign({
            waiting: ({ context, event }) =>
              event.done ? [...context.waiting, event.done] : [...context.waiting, () => {}],
          }),
        },
      },
      invoke: {
        src: 'pass',
        input: ({ context }) => ({ boot: context.boot }),
        onDone: {
          target: 'afterPass',
          actions: [
            { type: 'settle', params: ({ context }) => ({ callers: context.covered }) },
            assign({ boot: false, covered: [] }),
          ],
        },
        onError: {
          target: 'afterPass',
          actions: [
            { type: 'report', params: ({ event }) => ({ error: event.error }) },
            {
              type: 'settle',
              params: ({ context, event }) => ({ callers: context.covered, error: event.error }),
            },
            // A failed boot pass is retried as a boot pass: step 1 must still run.
            assign({ covered: [] }),
          ],
        },
      },
    },
    afterPass: {
      always: [{ guard: 'ticked', target: 'reconciling' }, { target: 'idle' }],
    },
  },
});
