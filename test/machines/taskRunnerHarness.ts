/**
 * Test support for the TaskRunner statechart: every I/O action replaced by a
 * deferred fake the test answers by hand (the answer is the chart's
 * `.done` / `.error` event, sent as the runtime's wrapper sends it), the
 * ContainerRun child by a deferred promise fake unless a test runs the real
 * chart, on xstate's SimulatedClock; and a transition-coverage recorder for
 * any machine id (the ContainerRun harness's recorder, generalised; the
 * transition names are the same).
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
  type AdoptRequest,
  type AdoptResult,
  type FinalizeRequest,
  type LoadRowRequest,
  type RunnerOutcome,
  type RunnerRow,
  type StopRunRequest,
  type TaskRunnerEvent,
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
 *
 * A transition whose action crashes the actor (the runner's `crash`, which
 * rethrows an I/O error) shows no microstep: XState reports none for a step
 * that threw. It is counted when the event was delivered in a state that
 * declares a transition on it and the actor then ended in error with that
 * very event's error (checked when the coverage is read).
 */
export class MachineCoverage {
  readonly transitions = new Set<string>();
  readonly states = new Set<string>();
  private readonly crashCandidates: Array<{
    actor: { getSnapshot(): { status: string; error?: unknown } };
    error: unknown;
    keys: string[];
  }> = [];

  constructor(readonly machineId: string) {}

  readonly inspect = (ev: InspectionEvent) => {
    if (ev.type === '@xstate.event') return this.noteDelivery(ev);
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

  private noteDelivery(ev: Extract<InspectionEvent, { type: '@xstate.event' }>): void {
    const event = ev.event as { type: string; error?: unknown };
    if (!('error' in event)) return;
    const snap = ev.actorRef.getSnapshot() as {
      machine?: AnyStateMachine;
      _nodes?: AnyStateNode[];
      status?: string;
    };
    if (snap.machine?.id !== this.machineId || snap.status !== 'active') return;
    const keys = (snap._nodes ?? [])
      .filter((n) => (n.transitions.get(event.type)?.length ?? 0) > 0)
      .map((n) => `${n.id} on '${event.type}' #0`);
    if (keys.length > 0)
      this.crashCandidates.push({ actor: ev.actorRef, error: event.error, keys });
  }

  private settleCrashes(): void {
    for (const c of this.crashCandidates) {
      const snap = c.actor.getSnapshot();
      if (snap.status === 'error' && snap.error === c.error)
        for (const k of c.keys) this.transitions.add(k);
    }
  }

  missingTransitions(machine: AnyStateMachine): string[] {
    this.settleCrashes();
    return declaredTransitions(machine).filter((k) => !this.transitions.has(k));
  }

  missingStates(machine: AnyStateMachine): string[] {
    return declaredStates(machine).filter((id) => !this.states.has(id));
  }
}

// ---------------------------------------------------------------- deferred fakes

/** One call to a fake I/O action (or the fake child), waiting for the test to answer it. */
export interface Call<I, O> {
  input: I;
  /** The runner that asked (an action's `self`); the child's calls have none. */
  self: AnyActorRef | null;
  /** An invoked child's signal (aborted when the state that invoked it is left); actions have none. */
  signal: AbortSignal | null;
  resolve(value: O): void;
  reject(error: unknown): void;
  /** Whether the test answered it. */
  readonly answered: boolean;
}

/** The calls made to one fake, oldest first. */
export class Calls<I, O> {
  readonly all: Array<Call<I, O>> = [];

  /** For an action: how its answer reaches the runner (its `.done` and `.error` events). */
  constructor(
    private readonly events?: {
      done(output: O): TaskRunnerEvent;
      error(error: unknown): TaskRunnerEvent;
    },
  ) {}

  /** The latest call; throws if there was none, so a missing call fails the test. */
  last(): Call<I, O> {
    const c = this.all.at(-1);
    if (c === undefined) throw new Error('no call was made');
    return c;
  }

  get count(): number {
    return this.all.length;
  }

  private record(
    input: I,
    self: AnyActorRef | null,
    signal: AbortSignal | null,
    resolve: (v: O) => void,
    reject: (e: unknown) => void,
  ): void {
    const call = {
      input,
      self,
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
  }

  /** The fake as a provided action: the answer is sent to the runner that asked. */
  action() {
    const events = this.events;
    if (events === undefined) throw new Error('Calls: an action fake needs its events');
    return ({ self }: { self: AnyActorRef }, input: I) =>
      this.record(
        input,
        self,
        null,
        (v) => self.send(events.done(v)),
        (e) => self.send(events.error(e)),
      );
  }

  /** The fake as invoked promise logic (the ContainerRun child's stand-in). */
  logic() {
    return fromPromise<O, I>(
      ({ input, signal }) =>
        new Promise<O>((resolve, reject) => this.record(input, null, signal, resolve, reject)),
    );
  }
}

export interface RunnerFakes {
  loadRow: Calls<LoadRowRequest, RunnerRow>;
  adopt: Calls<AdoptRequest, AdoptResult>;
  containerRun: Calls<ContainerRunInput, RunnerOutcome>;
  finalize: Calls<FinalizeRequest, 'finished' | 'gone'>;
  stopRun: Calls<StopRunRequest, void>;
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
    loadRow: new Calls({
      done: (output) => ({ type: 'roundtable.runner.loadRow.done', output }),
      error: (error) => ({ type: 'roundtable.runner.loadRow.error', error }),
    }),
    adopt: new Calls({
      done: (output) => ({ type: 'roundtable.runner.adopt.done', output }),
      error: (error) => ({ type: 'roundtable.runner.adopt.error', error }),
    }),
    containerRun: new Calls(),
    finalize: new Calls({
      done: (output) => ({ type: 'roundtable.runner.finalize.done', output }),
      error: (error) => ({ type: 'roundtable.runner.finalize.error', error }),
    }),
    stopRun: new Calls({
      done: () => ({ type: 'roundtable.runner.stopRun.done' }),
      error: (error) => ({ type: 'roundtable.runner.stopRun.error', error }),
    }),
    held: [],
    released: [],
  };
  const machine = taskRunnerMachine.provide({
    actors: {
      // provide() types the child as the chart; any logic with its input and
      // output runs the same, so the fake stands in for it.
      containerRun:
        options.containerRun ??
        (fakes.containerRun.logic() as unknown as typeof containerRunMachine),
    },
    actions: {
      loadRow: fakes.loadRow.action(),
      adopt: fakes.adopt.action(),
      finalize: fakes.finalize.action(),
      stopRun: fakes.stopRun.action(),
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
