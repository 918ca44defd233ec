/**
 * The Reconciler's loop as a statechart: one pass at boot, then one every
 * `periodMs` on the actor system's clock, and one whenever a tick
 * (`roundtable.reconciler.tick`, namespaced like the supervisor's events)
 * arrives (tests and `runtime.reconcile()` send it, as Oban's `:rescue`).
 * Passes never overlap: a tick during a pass asks for one more pass after it.
 *
 * The pass itself is the provided `pass` actor; a tick that comes while it
 * runs also runs the provided `wanted` action, so a pass can cut long,
 * deferrable work short (the prune), since another pass follows at once.
 * A failed pass is reported
 * through the provided `report` action and the loop goes on: a database
 * outage must not take the Reconciler, a permanent child, down with it.
 * A failure the provided `halts` guard names final (the store was closed:
 * src/actors/afterStoreFailure.ts) is reported too, and the loop halts:
 * no pass runs again, and a tick is answered at once with a
 * ReconcilerStoppedError. Halted is not a final state: to its supervisor a
 * final state is an exit, to restart from.
 *
 * A tick that wants an answer carries an `id`; the loop answers it by
 * emitting `roundtable.reconciler.passed` (naming the ids the pass covered,
 * with the pass's error if it failed) once the pass that covers it is over.
 * The context holds only those ids, so a snapshot is plain data. A loop
 * that stops, errors or was never running answers nobody: a caller that
 * must hear back watches the actor too, as a gen_server call monitors its
 * server (the Reconciler's `requestPass`).
 */
import { assign, emit, fromPromise, setup } from 'xstate';

export interface ReconcileLoopInput {
  periodMs: number;
}

/** Asks for a pass; with `id`, the loop answers with `roundtable.reconciler.passed`. */
export type ReconcileLoopEvent = {
  type: 'roundtable.reconciler.tick';
  id?: string;
};

/** The pass covering the ticks `ticks` finished: failed with `error`, or (absent) worked. */
export type ReconcileLoopEmitted = {
  type: 'roundtable.reconciler.passed';
  ticks: readonly string[];
  error?: unknown;
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
  /** Ids of the ticks that the running pass does not cover yet. */
  waiting: string[];
  /** Ids of the ticks the running pass covers. */
  covered: string[];
  /** A tick (with or without an id) came during the running pass: one more pass after it. */
  again: boolean;
}

export const reconcileLoopMachine = setup({
  types: {
    input: {} as ReconcileLoopInput,
    context: {} as Context,
    events: {} as ReconcileLoopEvent,
    emitted: {} as ReconcileLoopEmitted,
  },
  actors: {
    pass: fromPromise<void, { boot: boolean }>(async () => {
      throw new Error("reconcileLoop: provide the 'pass' actor");
    }),
  },
  actions: {
    report: (_: unknown, _params: { error: unknown }) => {},
    wanted: () => {},
  },
  delays: { periodMs: ({ context }) => context.periodMs },
  guards: {
    ticked: ({ context }) => context.again,
    halts: (_: unknown, _params: { error: unknown }) => false,
  },
}).createMachine({
  id: 'reconciler',
  context: ({ input }) => ({
    periodMs: input.periodMs,
    boot: true,
    waiting: [],
    covered: [],
    again: false,
  }),
  initial: 'reconciling',
  states: {
    idle: {
      after: { periodMs: { target: 'reconciling' } },
      on: {
        'roundtable.reconciler.tick': {
          target: 'reconciling',
          actions: assign({
            waiting: ({ context, event }) =>
              event.id === undefined ? context.waiting : [...context.waiting, event.id],
          }),
        },
      },
    },
    reconciling: {
      entry: assign(({ context }) => ({ covered: context.waiting, waiting: [], again: false })),
      on: {
        'roundtable.reconciler.tick': {
          actions: [
            assign({
              waiting: ({ context, event }) =>
                event.id === undefined ? context.waiting : [...context.waiting, event.id],
              again: true,
            }),
            'wanted',
          ],
        },
      },
      invoke: {
        src: 'pass',
        input: ({ context }) => ({ boot: context.boot }),
        onDone: {
          target: 'afterPass',
          actions: [
            emit(({ context }) => ({
              type: 'roundtable.reconciler.passed' as const,
              ticks: context.covered,
            })),
            assign({ boot: false, covered: [] }),
          ],
        },
        onError: [
          {
            guard: { type: 'halts', params: ({ event }) => ({ error: event.error }) },
            target: 'halted',
            actions: [
              { type: 'report', params: ({ event }) => ({ error: event.error }) },
              emit(({ context, event }) => ({
                type: 'roundtable.reconciler.passed' as const,
                ticks: [...context.covered, ...context.waiting],
                error: event.error,
              })),
              assign({ covered: [], waiting: [], again: false }),
            ],
          },
          {
            target: 'afterPass',
            actions: [
              { type: 'report', params: ({ event }) => ({ error: event.error }) },
              emit(({ context, event }) => ({
                type: 'roundtable.reconciler.passed' as const,
                ticks: context.covered,
                error: event.error,
              })),
              // A failed boot pass is retried as a boot pass: step 1 must still run.
              assign({ covered: [] }),
            ],
          },
        ],
      },
    },
    halted: {
      on: {
        'roundtable.reconciler.tick': {
          actions: emit(({ event }) => ({
            type: 'roundtable.reconciler.passed' as const,
            ticks: event.id === undefined ? [] : [event.id],
            error: new ReconcilerStoppedError(
              'the reconciler halted after a failure no pass can outlive (the store was closed)',
            ),
          })),
        },
      },
    },
    afterPass: {
      always: [{ guard: 'ticked', target: 'reconciling' }, { target: 'idle' }],
    },
  },
});
