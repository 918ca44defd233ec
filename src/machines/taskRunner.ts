/**
 * One session's TaskRunner as a statechart: waiting for a slot (with its
 * position) -> starting (claim the row) -> running (the ContainerRun machine
 * as a child) -> finalizing (finish by compare-and-set, release the slot)
 * -> done. A runner (re)started on a running row takes the adopt path
 * instead: it fences the previous owner with the epoch and polls the run.
 *
 * No I/O here: every effect is an actor or action provided with
 * `taskRunnerMachine.provide(...)` (src/actors/taskRunner.ts wires the real
 * ones). An unexpected I/O error is left unhandled on purpose: the runner
 * crashes, its transient supervisor restarts it, and the new incarnation
 * re-reads its row (rows outlive processes).
 */
import { type AnyActorRef, assign, fromPromise, setup } from 'xstate';
import { containerRunMachine } from './containerRun.js';
import type { ContainerRunOutput } from './containerRunTypes.js';

/** Input of a TaskRunner. */
export interface TaskRunnerInput {
  sessionId: string;
  userId: string;
  pollMs: number;
  adoptBudgetMs: number;
  ioTimeoutMs?: number;
}

/** What `loadRow` reports of the session row. */
export interface RunnerRow {
  status: 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';
  handle: string | null;
}

/** The claim's answer: ours, capacity taken elsewhere, or no longer queued. */
export type ClaimResult = { kind: 'claimed' } | { kind: 'at_cap' } | { kind: 'gone' };

/** The adopt CAS's answer: the fenced row's run, or the row moved on. */
export type AdoptResult =
  | { kind: 'adopted'; handle: string | null; startedAt: Date | null }
  | { kind: 'gone' };

/** How the run ended, as finalize records it. `orphaned`: running with no handle to find. */
export type RunnerOutcome = ContainerRunOutput | { outcome: 'orphaned' };

/** Events a TaskRunner receives from outside. */
export type TaskRunnerEvent =
  | { type: 'runner_slot'; sessionId: string }
  /** The row was cancelled (by the runtime, already): stop the run and leave. */
  | { type: 'cancel' }
  /**
   * The RunnerPool was restarted and knows no waiter: a waiting runner
   * enqueues again, one that holds (or is claiming) a slot holds it again.
   */
  | { type: 'pool_restarted' };

export interface TaskRunnerContext {
  sessionId: string;
  userId: string;
  pollMs: number;
  adoptBudgetMs: number;
  ioTimeoutMs: number | undefined;
  /** Place in the line while waiting (0: granted); null otherwise or while the pool restarts. */
  position: number | null;
  mode: 'owner' | 'adopt';
  handle: string | null;
  sessionStartedAt: Date | null;
  outcome: RunnerOutcome | null;
  /** Why the runner ended: finished, gone (someone else moved the row), cancelled. */
  ending: 'finished' | 'gone' | 'cancelled' | null;
}

const notProvided = (name: string) => new Error(`taskRunner: provide the '${name}' actor`);

/** Cancel is accepted in every state but the last two. */
const onCancel = { cancel: { target: '#taskRunner.cancelling' } } as const;

// A restarted pool knows no holders: a runner past the line (starting,
// adopting, running, finalizing) tells it again that it holds its slot.
const rejoinOnPoolRestart = {
  pool_restarted: {
    actions: {
      type: 'rejoin',
      params: ({ context }: { context: TaskRunnerContext }) => ({
        sessionId: context.sessionId,
        userId: context.userId,
      }),
    },
  },
} as const;

/**
 * The TaskRunner statechart. Its output is `{ ending, outcome }`, a
 * `normal` exit for its supervisor (a transient child is not restarted).
 */
export const taskRunnerMachine = setup({
  types: {
    input: {} as TaskRunnerInput,
    context: {} as TaskRunnerContext,
    events: {} as TaskRunnerEvent,
    output: {} as { ending: TaskRunnerContext['ending']; outcome: RunnerOutcome | null },
  },
  actors: {
    loadRow: fromPromise<RunnerRow, { sessionId: string }>(async () => {
      throw notProvided('loadRow');
    }),
    enqueue: fromPromise<number | null, { sessionId: string; userId: string; waiter: AnyActorRef }>(
      async () => {
        throw notProvided('enqueue');
      },
    ),
    claim: fromPromise<ClaimResult, { sessionId: string }>(async () => {
      throw notProvided('claim');
    }),
    adopt: fromPromise<AdoptResult, { sessionId: string; userId: string; waiter: AnyActorRef }>(
      async () => {
        throw notProvided('adopt');
      },
    ),
    // The chart itself; its own I/O actors are provided by the caller.
    containerRun: containerRunMachine,
    finalize: fromPromise<'finished' | 'gone', { sessionId: string; outcome: RunnerOutcome }>(
      async () => {
        throw notProvided('finalize');
      },
    ),
    stopRun: fromPromise<void, { sessionId: string; handle: string | null }>(async () => {
      throw notProvided('stopRun');
    }),
  },
  actions: {
    // Provided: gives the slot (or the place in line) back to the pool.
    releaseSlot: (_: unknown, _params: { sessionId: string }) => {},
    // Provided: a claim was refused at a cap (another node took the room):
    // the pool re-reads the rows, which count every node's runs.
    reloadPool: () => {},
    // Provided: tells a restarted pool this runner holds its session's slot.
    rejoin: (_: unknown, _params: { sessionId: string; userId: string }) => {},
  },
  delays: {
    pollMs: ({ context }) => context.pollMs,
  },
}).createMachine({
  id: 'taskRunner',
  context: ({ input }) => ({
    sessionId: input.sessionId,
    userId: input.userId,
    pollMs: input.pollMs,
    adoptBudgetMs: input.adoptBudgetMs,
    ioTimeoutMs: input.ioTimeoutMs,
    position: null,
    mode: 'owner',
    handle: null,
    sessionStartedAt: null,
    outcome: null,
    ending: null,
  }),
  initial: 'loading',
  output: ({ context }) => ({ ending: context.ending, outcome: context.outcome }),
  // Whatever path leads out, the slot goes back; the pool's monitor covers a crash.
  exit: { type: 'releaseSlot', params: ({ context }) => ({ sessionId: context.sessionId }) },
  states: {
    loading: {
      on: onCancel,
      invoke: {
        src: 'loadRow',
        input: ({ context }) => ({ sessionId: context.sessionId }),
        onDone: [
          { guard: ({ event }) => event.output.status === 'queued', target: 'waiting' },
          { guard: ({ event }) => event.output.status === 'running', target: 'adopting' },
          { target: 'done', actions: assign({ ending: 'gone' }) },
        ],
      },
    },
    waiting: {
      on: {
        ...onCancel,
        runner_slot: { target: 'starting' },
        // The new pool never saw this waiter: enqueue again (the rows kept its place).
        pool_restarted: { target: 'waiting', reenter: true },
      },
      invoke: {
        src: 'enqueue',
        input: ({ context, self }) => ({
          sessionId: context.sessionId,
          userId: context.userId,
          waiter: self,
        }),
        onDone: { actions: assign({ position: ({ event }) => event.output }) },
      },
      exit: assign({ position: null }),
    },
    starting: {
      on: {
        ...onCancel,
        ...rejoinOnPoolRestart,
      },
      invoke: {
        src: 'claim',
        input: ({ context }) => ({ sessionId: context.sessionId }),
        onDone: [
          {
            guard: ({ event }) => event.output.kind === 'claimed',
            target: 'running',
            actions: assign({ mode: 'owner' }),
          },
          {
            // Another node filled the cap between the grant and the claim:
            // give the slot back, have the pool re-read the rows (which count
            // every node's runs, so index and rows agree again) and ask again
            // a poll later.
            guard: ({ event }) => event.output.kind === 'at_cap',
            target: 'backingOff',
          },
          { target: 'done', actions: assign({ ending: 'gone' }) },
        ],
      },
    },
    backingOff: {
      on: onCancel,
      entry: [
        { type: 'releaseSlot', params: ({ context }) => ({ sessionId: context.sessionId }) },
        'reloadPool',
      ],
      after: { pollMs: { target: 'waiting' } },
    },
    adopting: {
      on: {
        ...onCancel,
        ...rejoinOnPoolRestart,
      },
      invoke: {
        src: 'adopt',
        input: ({ context, self }) => ({
          sessionId: context.sessionId,
          userId: context.userId,
          waiter: self,
        }),
        onDone: [
          {
            guard: ({ event }) => event.output.kind === 'adopted' && event.output.handle !== null,
            target: 'running',
            actions: assign(({ event }) =>
              event.output.kind === 'adopted'
                ? {
                    mode: 'adopt' as const,
                    handle: event.output.handle,
                    sessionStartedAt: event.output.startedAt,
                  }
                : {},
            ),
          },
          {
            // The owner died before recording where the run lives: nothing to poll.
            guard: ({ event }) => event.output.kind === 'adopted',
            target: 'finalizing',
            actions: assign({ outcome: { outcome: 'orphaned' } }),
          },
          { target: 'done', actions: assign({ ending: 'gone' }) },
        ],
      },
    },
    running: {
      on: {
        ...onCancel,
        ...rejoinOnPoolRestart,
      },
      invoke: {
        src: 'containerRun',
        input: ({ context }) => ({
          sessionId: context.sessionId,
          mode: context.mode,
          handle: context.handle,
          sessionStartedAt: context.sessionStartedAt,
          pollMs: context.pollMs,
          budgetMs: context.adoptBudgetMs,
          ...(context.ioTimeoutMs === undefined ? {} : { ioTimeoutMs: context.ioTimeoutMs }),
        }),
        onDone: { target: 'finalizing', actions: assign({ outcome: ({ event }) => event.output }) },
      },
    },
    finalizing: {
      // Cancel while finalizing: the finish CAS and the cancel CAS race on
      // the row, and exactly one wins; the loser's write is a stale error.
      on: {
        ...onCancel,
        ...rejoinOnPoolRestart,
      },
      invoke: {
        src: 'finalize',
        input: ({ context }) => ({
          sessionId: context.sessionId,
          outcome: context.outcome ?? { outcome: 'orphaned' },
        }),
        onDone: { target: 'done', actions: assign({ ending: ({ event }) => event.output }) },
      },
    },
    cancelling: {
      entry: assign({ ending: 'cancelled' }),
      invoke: {
        src: 'stopRun',
        input: ({ context }) => ({ sessionId: context.sessionId, handle: context.handle }),
        onDone: { target: 'done' },
      },
    },
    done: { type: 'final' },
  },
});
