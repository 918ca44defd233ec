/**
 * One session's TaskRunner as a statechart. A runner is started when its
 * session already holds a slot: the dispatch tick granted it to this node
 * (the grant is the claim: the row is `running` under this owner), or the
 * Reconciler found a run whose owner is gone and asks for it to be adopted.
 *
 *   loading -> running (the ContainerRun machine as a child) -> finalizing -> done
 *   loading -> adopting (fence the previous owner with the epoch) -> running ...
 *
 * A runner never waits in line: waiting is a row, not a process (the queue
 * is in Postgres). A runner that finds a running row it was not granted and
 * not asked to adopt leaves it alone: another live node owns that run.
 *
 * No I/O here: every effect is an actor or action provided with
 * `taskRunnerMachine.provide(...)` (src/actors/taskRunner.ts wires the real
 * ones). An unexpected error is left unhandled on purpose: the runner
 * crashes, its transient supervisor restarts it, and the new incarnation
 * re-reads its row and adopts its own run (rows outlive processes).
 */
import { type AnyActorRef, assign, fromPromise, setup } from 'xstate';
import { containerRunMachine } from './containerRun.js';
import type { ContainerRunOutput } from './containerRunTypes.js';

/** Input of a TaskRunner. */
export interface TaskRunnerInput {
  sessionId: string;
  userId: string;
  /** `granted`: this node's tick granted the session; `adopt`: the Reconciler asks to adopt an orphan. */
  start: 'granted' | 'adopt';
  pollMs: number;
  adoptBudgetMs: number;
  ioTimeoutMs?: number;
}

/**
 * What `loadRow` found: `run` a fresh grant to start, `adopt` a running row
 * to take over (an orphan, or this runner's own run after a crash), `gone`
 * nothing for this runner (finished, cancelled, or another live owner's).
 */
export type RunnerRow = { kind: 'run' } | { kind: 'adopt' } | { kind: 'gone' };

/** The adopt CAS's answer: the fenced row's run, or the row moved on. */
export type AdoptResult =
  | { kind: 'adopted'; handle: string | null; startedAt: Date | null }
  | { kind: 'gone' };

/** How the run ended, as finalize records it. `orphaned`: running with no handle to find. */
export type RunnerOutcome = ContainerRunOutput | { outcome: 'orphaned' };

/** Events a TaskRunner receives from outside. */
export type TaskRunnerEvent =
  /** The row was cancelled (by the runtime, already): stop the run and leave. */
  | { type: 'cancel' }
  /** The RunnerPool was restarted and watches no holder: hold the slot again. */
  | { type: 'pool_restarted' };

export interface TaskRunnerContext {
  sessionId: string;
  userId: string;
  start: TaskRunnerInput['start'];
  pollMs: number;
  adoptBudgetMs: number;
  ioTimeoutMs: number | undefined;
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

// A restarted pool watches no holder: a runner holding a slot tells it again.
const rejoinOnPoolRestart = {
  pool_restarted: {
    actions: {
      type: 'hold',
      params: ({ context }: { context: TaskRunnerContext }) => ({ sessionId: context.sessionId }),
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
    loadRow: fromPromise<RunnerRow, { sessionId: string; start: TaskRunnerInput['start'] }>(
      async () => {
        throw notProvided('loadRow');
      },
    ),
    adopt: fromPromise<AdoptResult, { sessionId: string; userId: string; holder: AnyActorRef }>(
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
    // Provided: tells the pool this runner holds its session's slot (monitored).
    hold: (_: unknown, _params: { sessionId: string }) => {},
    // Provided: gives the slot back to the pool (finished, cancelled, gone).
    releaseSlot: (_: unknown, _params: { sessionId: string }) => {},
  },
  delays: {
    pollMs: ({ context }) => context.pollMs,
  },
}).createMachine({
  id: 'taskRunner',
  context: ({ input }) => ({
    sessionId: input.sessionId,
    userId: input.userId,
    start: input.start,
    pollMs: input.pollMs,
    adoptBudgetMs: input.adoptBudgetMs,
    ioTimeoutMs: input.ioTimeoutMs,
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
        input: ({ context }) => ({ sessionId: context.sessionId, start: context.start }),
        onDone: [
          {
            guard: ({ event }) => event.output.kind === 'run',
            target: 'running',
            actions: [
              assign({ mode: 'owner' }),
              { type: 'hold', params: ({ context }) => ({ sessionId: context.sessionId }) },
            ],
          },
          { guard: ({ event }) => event.output.kind === 'adopt', target: 'adopting' },
          { target: 'done', actions: assign({ ending: 'gone' }) },
        ],
      },
    },
    adopting: {
      // The adopt step holds the slot as soon as its CAS lands: a pool that
      // restarts meanwhile must be told again (holding twice is harmless).
      on: { ...onCancel, ...rejoinOnPoolRestart },
      invoke: {
        src: 'adopt',
        input: ({ context, self }) => ({
          sessionId: context.sessionId,
          userId: context.userId,
          holder: self,
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
      on: { ...onCancel, ...rejoinOnPoolRestart },
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
      // the row, and exactly one wins; the loser's write is a stale outcome.
      on: { ...onCancel, ...rejoinOnPoolRestart },
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
