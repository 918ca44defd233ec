/**
 * Test support for the ContainerRun statechart: scripted fakes for its I/O
 * actions (each answers by sending the chart its `.done` / `.error` event),
 * a driver for the adopt loop on xstate's SimulatedClock, and a
 * transition-coverage recorder fed by inspection events.
 */
import {
  type AnyStateMachine,
  type AnyStateNode,
  createActor,
  type InspectionEvent,
  SimulatedClock,
  type StateValue,
} from 'xstate';
import type { MaybeTimestamp } from '../../src/machines/adoptPolicy.js';
import {
  type ContainerRunEvent,
  type ContainerRunInput,
  type ContainerRunOutput,
  containerRunMachine,
} from '../../src/machines/containerRun.js';

/** Lets pending promise callbacks and the sends they trigger run; no real time passes. */
export const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

// ---------------------------------------------------------------- coverage

/** A stable name for a transition: source, event, and its position among that event's candidates. */
function transitionKey(node: AnyStateNode, eventType: string, index: number): string {
  return `${node.id} on '${eventType}' #${index}`;
}

function allNodes(machine: AnyStateMachine): AnyStateNode[] {
  const out: AnyStateNode[] = [];
  const walk = (node: AnyStateNode) => {
    out.push(node);
    for (const child of Object.values(node.states)) walk(child as AnyStateNode);
  };
  walk(machine.root);
  return out;
}

/** Every transition the machine definition declares (events, I/O answers, `after`, invoke done, `always`). */
export function declaredTransitions(machine: AnyStateMachine): string[] {
  const keys: string[] = [];
  for (const node of allNodes(machine)) {
    for (const [eventType, list] of node.transitions) {
      for (let i = 0; i < list.length; i++) keys.push(transitionKey(node, eventType, i));
    }
    const always = node.always ?? [];
    for (let i = 0; i < always.length; i++) keys.push(transitionKey(node, '', i));
  }
  return keys.sort();
}

/** Every state node id of the machine. */
export function declaredStates(machine: AnyStateMachine): string[] {
  return allNodes(machine)
    .map((n) => n.id)
    .sort();
}

function activeIds(rootId: string, value: StateValue): string[] {
  if (typeof value === 'string') return [`${rootId}.${value}`];
  return Object.entries(value).flatMap(([key, child]) => [
    `${rootId}.${key}`,
    ...(child === undefined ? [] : activeIds(`${rootId}.${key}`, child)),
  ]);
}

/** Collects the transitions and states that inspected runs actually took. */
export class CoverageRecorder {
  readonly transitions = new Set<string>();
  readonly states = new Set<string>();

  readonly inspect = (ev: InspectionEvent) => {
    if (ev.type !== '@xstate.microstep' && ev.type !== '@xstate.snapshot') return;
    const snapshot = ev.snapshot as { value?: StateValue; machine?: AnyStateMachine };
    if (snapshot.machine?.id !== 'containerRun' || snapshot.value === undefined) return;
    this.states.add('containerRun');
    for (const id of activeIds('containerRun', snapshot.value)) this.states.add(id);
    if (ev.type !== '@xstate.microstep') return;
    for (const t of ev._transitions) {
      const source = t.source as AnyStateNode;
      const list = t.eventType === '' ? (source.always ?? []) : source.transitions.get(t.eventType);
      this.transitions.add(transitionKey(source, t.eventType, list?.indexOf(t) ?? -1));
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

// ---------------------------------------------------------------- adopt driver

/** One scripted look at the container: what it returns (or that it fails), and how long it takes. */
export type ScriptedObservation =
  | {
      kind: 'ok';
      containerStartedAt: MaybeTimestamp;
      marker: { exitCode: number } | null;
      latencyMs: number;
      /** The engine said the service or container does not exist any more. */
      gone?: boolean;
    }
  | { kind: 'fail'; latencyMs: number };

/** Once the script runs out, the container answers "unknown" forever. */
export const UNKNOWN_FOREVER: ScriptedObservation = {
  kind: 'ok',
  containerStartedAt: null,
  marker: null,
  latencyMs: 0,
};

export interface AdoptionRun {
  output: ContainerRunOutput;
  observeCalls: number;
  readOutputCalls: number;
  /** The simulated clock's reading when the run finished. */
  finishedAt: number;
}

/**
 * Runs the adopt path against a script on a SimulatedClock: each observation
 * takes its `latencyMs` of simulated time, and the clock advances by `pollMs`
 * only while the machine waits. Stops after `maxSteps` to keep a broken
 * machine from looping forever.
 */
export async function runAdoption(
  script: readonly ScriptedObservation[],
  input: Omit<ContainerRunInput, 'mode' | 'sessionId' | 'handle'>,
  options: { output?: string; inspect?: (ev: InspectionEvent) => void; maxSteps?: number } = {},
): Promise<AdoptionRun> {
  const clock = new SimulatedClock();
  let observeCalls = 0;
  let readOutputCalls = 0;
  // A box, not a `let`: TypeScript cannot see the closure below assign it.
  const pending: {
    current: { seq: number; answer: (e: ContainerRunEvent) => void } | null;
  } = { current: null };
  const machine = containerRunMachine.provide({
    actions: {
      observe: ({ self }, { seq }) => {
        observeCalls += 1;
        pending.current = { seq, answer: (e) => self.send(e) };
      },
      readOutput: ({ self }) => {
        readOutputCalls += 1;
        // Answered later, as real I/O would be.
        void Promise.resolve().then(() =>
          self.send({
            type: 'roundtable.run.readOutput.done',
            output: options.output ?? 'the output',
          }),
        );
      },
    },
  });
  const actor = createActor(machine, {
    clock,
    input: { ...input, sessionId: 's1', mode: 'adopt', handle: 'svc-s1' },
    ...(options.inspect ? { inspect: options.inspect } : {}),
  });
  actor.start();
  const maxSteps = options.maxSteps ?? 10_000;
  for (let step = 0; step < maxSteps; step++) {
    await settle();
    const snap = actor.getSnapshot();
    if (snap.status !== 'active') break;
    const answer = pending.current;
    if (answer !== null) {
      const scripted = script[observeCalls - 1] ?? UNKNOWN_FOREVER;
      pending.current = null;
      clock.increment(scripted.latencyMs);
      if (scripted.kind === 'fail')
        answer.answer({
          type: 'roundtable.run.observe.error',
          seq: answer.seq,
          error: new Error('docker api hiccup'),
        });
      else
        answer.answer({
          type: 'roundtable.run.observe.done',
          seq: answer.seq,
          output: {
            containerStartedAt: scripted.containerStartedAt,
            marker: scripted.marker,
            ...(scripted.gone === undefined ? {} : { gone: scripted.gone }),
          },
        });
    } else if (snap.matches({ adopting: 'waiting' })) {
      clock.increment(input.pollMs);
    } else {
      throw new Error(`runAdoption: stuck in ${JSON.stringify(snap.value)}`);
    }
  }
  const snap = actor.getSnapshot();
  if (snap.status !== 'done') throw new Error(`runAdoption: not done (${snap.status})`);
  return { output: snap.output, observeCalls, readOutputCalls, finishedAt: clock.now() };
}

// ---------------------------------------------------------------- output reads

/** One scripted read of an exited run's output: its answer, and how long it takes. */
export type ScriptedRead =
  | { kind: 'ok'; latencyMs: number }
  | { kind: 'error'; code: string | null; latencyMs: number }
  /** Never answers: the chart's `ioTimeoutMs` ends it. */
  | { kind: 'hang' };

/** Once the script runs out, reads succeed. */
const READ_OK: ScriptedRead = { kind: 'ok', latencyMs: 0 };

export interface ReadsRun {
  output: ContainerRunOutput;
  readCalls: number;
  /** The simulated clock's reading when the run finished (0: the exit was seen at 0). */
  finishedAt: number;
}

/**
 * Runs an adoption whose first look sees the exit marker, then answers its
 * reads of the output from `script` on a SimulatedClock: each answer takes
 * its `latencyMs`, a hang lasts until the chart's deadline, and the clock
 * advances only while the chart waits.
 */
export async function runReads(
  script: readonly ScriptedRead[],
  input: { pollMs: number; budgetMs: number; ioTimeoutMs: number },
  maxSteps = 10_000,
): Promise<ReadsRun> {
  const clock = new SimulatedClock();
  let readCalls = 0;
  const pending: { current: ((e: ContainerRunEvent) => void) | null } = { current: null };
  const machine = containerRunMachine.provide({
    actions: {
      observe: ({ self }, { seq }) =>
        void Promise.resolve().then(() =>
          self.send({
            type: 'roundtable.run.observe.done',
            seq,
            output: { containerStartedAt: null, marker: { exitCode: 9 } },
          }),
        ),
      readOutput: ({ self }) => {
        readCalls += 1;
        pending.current = (e) => self.send(e);
      },
    },
  });
  const actor = createActor(machine, {
    clock,
    input: { ...input, sessionId: 's1', mode: 'adopt', handle: 'svc-s1', sessionStartedAt: null },
  });
  actor.start();
  for (let step = 0; step < maxSteps; step++) {
    await settle();
    const snap = actor.getSnapshot();
    if (snap.status !== 'active') break;
    const answer = pending.current;
    if (answer !== null) {
      pending.current = null;
      const scripted = script[readCalls - 1] ?? READ_OK;
      if (scripted.kind === 'hang') {
        clock.increment(input.ioTimeoutMs);
        continue;
      }
      clock.increment(scripted.latencyMs);
      answer(
        scripted.kind === 'ok'
          ? { type: 'roundtable.run.readOutput.done', output: 'the output' }
          : {
              type: 'roundtable.run.readOutput.error',
              error: Object.assign(new Error('read failed'), { code: scripted.code }),
            },
      );
    } else if (snap.matches({ readingOutput: 'waitingToRead' })) {
      const d = snap.context.outputReadDecision;
      if (d?.kind !== 'read_again') throw new Error('runReads: waiting without a read_again');
      clock.increment(d.inMs);
    } else {
      throw new Error(`runReads: stuck in ${JSON.stringify(snap.value)}`);
    }
  }
  const snap = actor.getSnapshot();
  if (snap.status !== 'done') throw new Error(`runReads: not done (${snap.status})`);
  return { output: snap.output, readCalls, finishedAt: clock.now() };
}
