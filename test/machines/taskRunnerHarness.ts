/**
 * Test support for the TaskRunner statechart: every I/O actor replaced by a
 * deferred fake the test answers by hand, on xstate's SimulatedClock, and a
 * transition-coverage recorder for any machine id (the ContainerRun
 * harness's recorder, generalised; the transition names are the same).
 */
import {
  type AnyActorRef,
  type AnyStateMachine,
  type AnyStateNode,
  createActor,
  fromPromise,
  type InspectionEvent,
  SimulatedClock,
  type StateValue,
} from 'xstate';
import type { ContainerRunInput, containerRunMachine } from '../../src/machines/containerRun.js';
import {
  type AdoptResult,
  type RunnerOutcome,
  type RunnerRow,
  type TaskRunnerInput,
  taskRunnerMachine,
} from '../../src/machines/taskRunner.js';
import { declaredStates, declaredTransitions } from './containerRunHarness.js';

export { declaredStates, declaredTransitions };

/** Lets pending promise callbacks and the sends they trigger run; no real time passes. */
export const settle = async (rounds = 3) => {
  for (let i = 0; i < rounds; i++) await new Promise<void>((r) => setImmediate(r));
};

// ---------------------------------------------------------------- coverage

function activeIds(prefix: string, value: StateValue): string[] {
  if (typeof value === 'string') return [`${prefix}.${value}`];
  return Object.entries(value).flatMap(([key, child]) => [
    `${prefix}.${key}`,
    ...(child === undefined ? [] : activeIds(`${prefix}.${key}`, child)),
  ]);
}

/**
 * Records the transitions and states that inspected runs of the machine
 * with id `machineId` took, named as `declaredTransitions` names them.
 */
export class MachineCoverage {
  readonly transitions = new Set<string>();
  readonly states = new Set<string>();

  constructor(readonly machineId: string) {}

  readonly inspect = (ev: InspectionEvent) => {
    if (ev.type !== '@xstate.microstep' && ev.type !== '@xstate.snapshot') return;
    const snapshot = ev.snapshot as { value?: StateValue; machine?: AnyStateMachine };
    if (snapshot.machine?.id !== this.machineId || snapshot.value === undefined) return;
    this.states.add(this.machineId);
    for (const id of activeIds(this.machineId, snapshot.value)) this.states.add(id);
    if (ev.type !== '@xstate.microstep') return;
    for (const t of ev._transitions) {
      const source = t.source as AnyStateNode;
      const list = t.eventType === '' ? (source.always ?? []) : source.transitions.get(t.eventType);
      this.transitions.add(`${source.id} on '${t.eventType}' #${list?.indexOf(t) ?? -1}`);
      this.states.add(source.id);
    }
  };

  missingTransitions(machine: AnyStateMachine): string[] {
    return declaredTransitions(machine).filter((k) => !this.transitions.has(k));
  }

  missingStates(machine: AnyStateMachine): string[] {
    return declaredStates(machine).filter((id) => !this.states.has(id));
  }
}

// ---------------------------------------------------------------- deferred fakes

/** One call to a fake I/O actor, waiting for the test to answer it. */
export interface Call<I, O> {
  input: I;
  signal: AbortSignal;
  resolve(value: O): void;
  reject(error: unknown): void;
  /** Whether the test answered it. */
  readonly answered: boolean;
}

/** The calls made to one fake actor, oldest first. */
export class Calls<I, O> {
  readonly all: Array<Call<I, O>> = [];

  /** The latest call; throws if there was none, so a missing call fails the test. */
  last(): Call<I, O> {
    const c = this.all.at(-1);
    if (c === undefined) throw new Error('no call was made');
    return c;
  }

  get count(): number {
    return this.all.length;
  }

  logic() {
    return fromPromise<O, I>(
      ({ input, signal }) =>
        new Promise<O>((resolve, reject) => {
          const call = {
            input,
            signal,
            answered: false,
            resolve: (v: O) => {
              call.answered = true;
              resolve(v);
            },
            reject: (e: unknown) => {
              call.answered = true;
              reject(e);
            },
          };
          this.all.push(call);
        }),
    );
  }
}

export interface RunnerFakes {
  loadRow: Calls<{ sessionId: string; start: TaskRunnerInput['start'] }, RunnerRow>;
  adopt: Calls<{ sessionId: string; userId: string; holder: AnyActorRef }, AdoptResult>;
  containerRun: Calls<ContainerRunInput, RunnerOutcome>;
  finalize: Calls<{ sessionId: string; outcome: RunnerOutcome }, 'finished' | 'gone'>;
  stopRun: Calls<{ sessionId: string; handle: string | null }, void>;
  /** Session ids `hold` was called with (the pool told this runner holds the slot), in order. */
  held: string[];
  /** Session ids `releaseSlot` was called with, in order. */
  released: string[];
}

export const RUNNER_INPUT: TaskRunnerInput = {
  sessionId: 's1',
  userId: 'alice',
  start: 'granted',
  pollMs: 1_000,
  adoptBudgetMs: 10_000,
};

/**
 * Starts a TaskRunner whose every actor is a deferred fake. `containerRun`
 * is a fake by default; pass `containerRun` to run another logic (the real
 * chart with its own fakes) as the child.
 */
export function startRunner(
  options: {
    inspect?: (ev: InspectionEvent) => void;
    input?: Partial<TaskRunnerInput>;
    containerRun?: typeof containerRunMachine;
  } = {},
) {
  const clock = new SimulatedClock();
  const fakes: RunnerFakes = {
    loadRow: new Calls(),
    adopt: new Calls(),
    containerRun: new Calls(),
    finalize: new Calls(),
    stopRun: new Calls(),
    held: [],
    released: [],
  };
  const machine = taskRunnerMachine.provide({
    actors: {
      loadRow: fakes.loadRow.logic(),
      adopt: fakes.adopt.logic(),
      // provide() types the child as the chart; any logic with its input and
      // output runs the same, so the fake stands in for it.
      containerRun:
        options.containerRun ??
        (fakes.containerRun.logic() as unknown as typeof containerRunMachine),
      finalize: fakes.finalize.logic(),
      stopRun: fakes.stopRun.logic(),
    },
    actions: {
      hold: (_, params) => {
        fakes.held.push(params.sessionId);
      },
      releaseSlot: (_, params) => {
        fakes.released.push(params.sessionId);
      },
    },
  });
  const errors: unknown[] = [];
  const actor = createActor(machine, {
    clock,
    input: { ...RUNNER_INPUT, ...options.input },
    ...(options.inspect ? { inspect: options.inspect } : {}),
  });
  // Without an observer an actor error would be rethrown globally; keep it for the test.
  actor.subscribe({ error: (e) => errors.push(e) });
  actor.start();
  return { actor, clock, fakes, errors };
}
