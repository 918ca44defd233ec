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
 * No I/O here: each state that needs some asks for it with an entry action
 * (`loadRow`, `adopt`, `finalize`, `stopRun`) provided with
 * `taskRunnerMachine.provide({ actions })` (src/actors/taskRunner.ts wires
 * the real ones); whoever performs it sends the answer back as an event
 * (`roundtable.runner.<op>.done` or `.error`), which only the state that
 * asked takes: an answer arriving after the runner moved on (cancelled) is
 * dropped. The run itself is the ContainerRun chart, invoked as a child.
 * An I/O error crashes the runner on purpose (the `crash` action rethrows
 * it): its transient supervisor restarts it, and the new incarnation
 * re-reads its row and adopts its own run (rows outlive processes).
 */
import { type AnyActorRef, assign, setup } from 'xstate';
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

/** Events a TaskRunner receives from the runtime. */
export type TaskRunnerCommand =
  /** The row was cancelled (by the runtime, already): stop the run and leave. */
  | { type: 'roundtable.runner.cancel' }
  /** The RunnerPool was restarted and watches no holder: hold the slot again. */
  | { type: 'roundtable.runner.pool_restarted' };

/** The answers of a TaskRunner's I/O, sent to it by whoever performs the I/O its actions ask for. */
export type TaskRunnerIoEvent =
  | { type: 'roundtable.runner.loadRow.done'; output: RunnerRow }
  | { type: 'roundtable.runner.loadRow.error'; error: unknown }
  | { type: 'roundtable.runner.adopt.done'; output: AdoptResult }
  | { type: 'roundtable.runner.adopt.error'; error: unknown }
  | { type: 'roundtable.runner.finalize.done'; output: 'finished' | 'gone' }
  | { type: 'roundtable.runner.finalize.error'; error: unknown }
  | { type: 'roundtable.runner.stopRun.done' }
  | { type: 'roundtable.runner.stopRun.error'; error: unknown };

/** Everything a TaskRunner receives from outside. */
export type TaskRunnerEvent = TaskRunnerCommand | TaskRunnerIoEvent;

/** What the `loadRow` action is asked with. */
export interface LoadRowRequest {
  sessionId: string;
  start: TaskRunnerInput['start'];
}
/** What the `adopt` action is asked with; the runner asking (the slot's holder) is its `self`. */
export interface AdoptRequest {
  sessionId: string;
  userId: string;
}
/** What the `finalize` action is asked with. */
export interface FinalizeRequest {
  sessionId: string;
  outcome: RunnerOutcome;
}
/** What the `stopRun` action is asked with. */
export interface StopRunRequest {
  sessionId: string;
  handle: string | null;
}

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

const notProvided = (name: string) => new Error(`taskRunner: provide the '${name}' action`);

/** Unprovided I/O answers with its error (so the runner crashes, as a failing call would). */
function unprovided<P>(
  name: string,
  type: TaskRunnerIoEvent['type'] & `${string}.error`,
): (args: { self: AnyActorRef }, params: P) => void {
  return ({ self }) => {
    self.send({ type, error: notProvided(name) });
  };
}

/** Cancel is accepted in every state but the last two. */
const onCancel = { 'roundtable.runner.cancel': { target: '#taskRunner.cancelling' } } as const;

// A restarted pool watches no holder: a runner holding a slot tells it again.
const rejoinOnPoolRestart = {
  'roundtable.runner.pool_restarted': {
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
    // The chart itself; its own I/O actions are provided by the caller.
    containerRun: containerRunMachine,
  },
  actions: {
    // The I/O, provided: each answers with its `.done` / `.error` event.
    loadRow: unprovided<LoadRowRequest>('loadRow', 'roundtable.runner.loadRow.error'),
    adopt: unprovided<AdoptRequest>('adopt', 'roundtable.runner.adopt.error'),
    finalize: unprovided<FinalizeRequest>('finalize', 'roundtable.runner.finalize.error'),
    stopRun: unprovided<StopRunRequest>('stopRun', 'roundtable.runner.stopRun.error'),
    // An I/O error is a crash: rethrown, the actor errors and its supervisor restarts it.
    crash: ({ event }) => {
      throw 'error' in event ? event.error : new Error(`taskRunner: crash on ${event.type}`);
    },
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
      entry: {
        type: 'loadRow',
        params: ({ context }) => ({ sessionId: context.sessionId, start: context.start }),
      },
      on: {
        ...onCancel,
        'roundtable.runner.loadRow.done': [
          {
            guard: ({ event }) => event.output.kind === 'run',
            target: 'running',
            // A fresh grant runs in the mode every incarnation starts in ('owner').
            actions: { type: 'hold', params: ({ context }) => ({ sessionId: context.sessionId }) },
          },
          { guard: ({ event }) => event.output.kind === 'adopt', target: 'adopting' },
          { target: 'done', actions: assign({ ending: 'gone' }) },
        ],
        'roundtable.runner.loadRow.error': { actions: 'crash' },
      },
    },
    adopting: {
      entry: {
        type: 'adopt',
        params: ({ context }) => ({ sessionId: context.sessionId, userId: context.userId }),
      },
      // The adopt step holds the slot as soon as its CAS lands: a pool that
      // restarts meanwhile must be told again (holding twice is harmless).
      on: {
        ...onCancel,
        ...rejoinOnPoolRestart,
        'roundtable.runner.adopt.done': [
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
        'roundtable.runner.adopt.error': { actions: 'crash' },
      },
    },
    running: {
      on: { ...onCancel, ...rejoinOnPoolRestart },
      invoke: {
        // Named, or XState names it after the state ('0.taskRunner.running'),
        // which is what the inspector's tree then shows a developer.
        id: 'containerRun',
        src: 'containerRun',
        input: ({ context }) => ({
          sessionId: context.sessionId,
          mode: context.mode,
          handle: context.handle,
          sessionStartedAt: context.sessionStartedAt,
          pollMs: context.pollMs,
          budgetMs: context.adoptBudgetMs,
          // Undefined is the default (validateContainerRunInput), as a missing key is.
          ioTimeoutMs: context.ioTimeoutMs,
        }),
        onDone: { target: 'finalizing', actions: assign({ outcome: ({ event }) => event.output }) },
      },
    },
    finalizing: {
      entry: {
        type: 'finalize',
        params: ({ context }) => ({
          sessionId: context.sessionId,
          outcome: context.outcome ?? { outcome: 'orphaned' },
        }),
      },
      // Cancel while finalizing: the finish CAS and the cancel CAS race on
      // the row, and exactly one wins; the loser's write is a stale outcome.
      on: {
        ...onCancel,
        ...rejoinOnPoolRestart,
        'roundtable.runner.finalize.done': {
          target: 'done',
          actions: assign({ ending: ({ event }) => event.output }),
        },
        'roundtable.runner.finalize.error': { actions: 'crash' },
      },
    },
    cancelling: {
      entry: [
        assign({ ending: 'cancelled' }),
        {
          type: 'stopRun',
          params: ({ context }) => ({ sessionId: context.sessionId, handle: context.handle }),
        },
      ],
      on: {
        'roundtable.runner.stopRun.done': { target: 'done' },
        'roundtable.runner.stopRun.error': { actions: 'crash' },
      },
    },
    done: { type: 'final' },
  },
});
