import { describe, expect, it } from 'vitest';
import { type AnyActorRef, createActor, SimulatedClock } from 'xstate';
import { ContainerError } from '../../src/containers/ContainerError.js';
import * as containerRun from '../../src/machines/containerRun.js';
import {
  type AttachEvent,
  ContainerRunError,
  type ContainerRunEvent,
  type ContainerRunInput,
  containerRunMachine,
  type Observation,
  type RunRef,
  type StartedRun,
} from '../../src/machines/containerRun.js';
import { runDocExamples } from '../support/docExamples.js';
import {
  CoverageRecorder,
  declaredTransitions,
  runAdoption,
  type ScriptedObservation,
  settle,
} from './containerRunHarness.js';

runDocExamples(new URL('../../src/machines/containerRunTypes.ts', import.meta.url), containerRun);

// Every run in this file reports to one recorder; the last test checks it saw the whole chart.
const coverage = new CoverageRecorder();
const inspect = coverage.inspect;

const SESSION = '2026-07-14T10:44:00Z';
const LATER = '2026-07-14T12:47:00Z';
const EARLIER = '2026-07-14T09:00:00Z';
const ok = (containerStartedAt: string | null, exitCode?: number): ScriptedObservation => ({
  kind: 'ok',
  containerStartedAt,
  marker: exitCode === undefined ? null : { exitCode },
  latencyMs: 0,
});
const fail: ScriptedObservation = { kind: 'fail', latencyMs: 0 };

type Fakes = {
  startRun?: Promise<StartedRun> | 'hang';
  observe?: () => Promise<Observation>;
  readOutput?: () => Promise<string>;
  /** The stream breaks as soon as it is asked for. */
  attachFails?: boolean;
};

/** Sends the answer of `work` to the chart as its `.done` / `.error` event, as the wrapper does. */
function answer<T>(
  self: AnyActorRef,
  work: Promise<T>,
  done: (output: T) => ContainerRunEvent,
  failed: (error: unknown) => ContainerRunEvent,
) {
  work.then(
    (o) => self.send(done(o)),
    (e: unknown) => self.send(failed(e)),
  );
}

/** Starts an owned run with controllable fakes; `attach.send` plays the exec stream. */
function ownerRun(fakes: Fakes = {}, input: Partial<ContainerRunInput> = {}) {
  const clock = new SimulatedClock();
  const attach: { send: ((e: AttachEvent) => void) | null; input: RunRef | null } = {
    send: null,
    input: null,
  };
  const never = new Promise<never>(() => {});
  const machine = containerRunMachine.provide({
    actions: {
      startRun: ({ self }) =>
        answer(
          self,
          fakes.startRun === 'hang'
            ? never
            : (fakes.startRun ?? Promise.resolve({ handle: 'svc-s1', startedAt: SESSION })),
          (output) => ({ type: 'roundtable.run.startRun.done', output }),
          (error) => ({ type: 'roundtable.run.startRun.error', error }),
        ),
      attach: ({ self }, ref) => {
        if (fakes.attachFails) {
          self.send({ type: 'roundtable.run.attach.error', error: new Error('hijack refused') });
          return;
        }
        attach.send = (e) => self.send(e);
        attach.input = ref;
      },
      observe: ({ self }, { seq }) =>
        answer(
          self,
          (
            fakes.observe ??
            (async () => ({ containerStartedAt: SESSION, marker: { exitCode: 0 } }))
          )(),
          (output) => ({ type: 'roundtable.run.observe.done', seq, output }),
          (error) => ({ type: 'roundtable.run.observe.error', seq, error }),
        ),
      readOutput: ({ self }) =>
        answer(
          self,
          (fakes.readOutput ?? (async () => 'full output'))(),
          (output) => ({ type: 'roundtable.run.readOutput.done', output }),
          (error) => ({ type: 'roundtable.run.readOutput.error', error }),
        ),
    },
  });
  const actor = createActor(machine, {
    clock,
    inspect,
    input: {
      sessionId: 's1',
      mode: 'owner',
      pollMs: 1_000,
      budgetMs: 10_000,
      ioTimeoutMs: 5_000,
      ...input,
    },
  });
  const chunks: string[] = [];
  actor.on('roundtable.run.output', (e) => chunks.push(e.chunk));
  actor.start();
  return { actor, clock, attach, chunks };
}

describe('owner path', () => {
  it('re-emits output chunks in order, then reads the full output and exits with the code', async () => {
    const { actor, attach, chunks } = ownerRun();
    await settle();
    expect(actor.getSnapshot().value).toBe('attached');
    expect(attach.input).toEqual({ sessionId: 's1', handle: 'svc-s1' });
    for (const chunk of ['a', 'b', 'c']) attach.send?.({ type: 'roundtable.run.output', chunk });
    attach.send?.({ type: 'roundtable.run.exited', exitCode: 3 });
    await settle();
    expect(chunks).toEqual(['a', 'b', 'c']);
    expect(actor.getSnapshot().output).toEqual({
      outcome: 'exited',
      exitCode: 3,
      output: 'full output',
    });
  });

  it('fails with START_FAILED, keeping the cause, when startRun rejects', async () => {
    const cause = new Error('no such image');
    const { actor } = ownerRun({ startRun: Promise.reject(cause) });
    await settle();
    const out = actor.getSnapshot().output;
    expect(out).toMatchObject({ outcome: 'failed', exitCode: null });
    if (out?.outcome !== 'failed') throw new Error('expected failed');
    expect(out.error).toBeInstanceOf(ContainerRunError);
    expect(out.error.code).toBe('START_FAILED');
    expect(out.error.cause).toBe(cause);
  });

  it('fails with START_TIMED_OUT when startRun outlives its deadline', async () => {
    const { actor, clock } = ownerRun({ startRun: 'hang' });
    clock.increment(4_999);
    expect(actor.getSnapshot().value).toBe('starting');
    clock.increment(1);
    expect(actor.getSnapshot().output).toMatchObject({
      outcome: 'failed',
      error: { code: 'START_TIMED_OUT' },
    });
  });

  it('falls back to polling for the marker when the exec stream breaks', async () => {
    const { actor, attach } = ownerRun();
    await settle();
    attach.send?.({ type: 'roundtable.run.attach.error', error: new Error('socket hang up') });
    expect(actor.getSnapshot().matches('adopting')).toBe(true);
    await settle();
    expect(actor.getSnapshot().context.attachError).toBeInstanceOf(Error);
    expect(actor.getSnapshot().output).toEqual({
      outcome: 'exited',
      exitCode: 0,
      output: 'full output',
    });
  });

  it('falls back to polling when attaching fails at once, and keeps the learned exec start time', async () => {
    const { actor } = ownerRun({
      attachFails: true,
      observe: async () => ({ containerStartedAt: LATER, marker: null }),
    });
    await settle();
    expect(actor.getSnapshot().context.sessionStartedAt).toBe(SESSION);
    expect(actor.getSnapshot().output).toEqual({
      outcome: 'gave_up',
      reason: 'container_replaced',
    });
  });

  it('fails with READ_OUTPUT_FAILED at once, keeping the exit code, when the output is not there (no engine outage)', async () => {
    const { actor, attach } = ownerRun({ readOutput: () => Promise.reject(new Error('gone')) });
    await settle();
    attach.send?.({ type: 'roundtable.run.exited', exitCode: 7 });
    await settle();
    expect(actor.getSnapshot().output).toMatchObject({
      outcome: 'failed',
      exitCode: 7,
      error: { code: 'READ_OUTPUT_FAILED' },
    });
  });

  it('reads a hanging output again every pollMs, then fails with READ_OUTPUT_TIMED_OUT at the budget', async () => {
    let reads = 0;
    const { actor, attach, clock } = ownerRun({
      readOutput: () => {
        reads++;
        return new Promise<string>(() => {});
      },
    });
    await settle();
    attach.send?.({ type: 'roundtable.run.exited', exitCode: 0 });
    // Reads at 0, 6 and 12 s, each timing out after 5 s with a 1 s wait
    // between: at 17 s the budget (10 s from the first failure, at 5 s) is
    // spent, and the run fails.
    clock.increment(5_000);
    expect(actor.getSnapshot().value).toEqual({ readingOutput: 'waitingToRead' });
    expect(actor.getSnapshot().status).toBe('active');
    for (let i = 0; i < 20 && actor.getSnapshot().status === 'active'; i++) clock.increment(1_000);
    expect(actor.getSnapshot().output).toMatchObject({
      outcome: 'failed',
      exitCode: 0,
      error: { code: 'READ_OUTPUT_TIMED_OUT', message: expect.stringMatching(/\(3 reads\)$/) },
    });
    expect(reads).toBe(3);
  });

  it('reads the output again while the engine is unavailable, and exits with it once a read succeeds', async () => {
    const answers = [
      new ContainerError('unavailable', 'socket refused'),
      new ContainerError('timeout', 'no answer'),
      'all of it',
    ];
    let reads = 0;
    const { actor, attach, clock } = ownerRun({
      readOutput: async () => {
        const next = answers[reads++];
        if (next instanceof Error) throw next;
        return next ?? 'too many reads';
      },
    });
    await settle();
    attach.send?.({ type: 'roundtable.run.exited', exitCode: 4 });
    await settle();
    expect(actor.getSnapshot().value).toEqual({ readingOutput: 'waitingToRead' });
    clock.increment(1_000);
    await settle();
    expect(reads).toBe(2);
    clock.increment(1_000);
    await settle();
    expect(actor.getSnapshot().output).toEqual({
      outcome: 'exited',
      exitCode: 4,
      output: 'all of it',
    });
    expect(reads).toBe(3);
  });

  it('a late answer to a read that failed is not taken while waiting to read again', async () => {
    const { actor, attach } = ownerRun({
      readOutput: () => Promise.reject(new ContainerError('unavailable', 'down')),
    });
    await settle();
    attach.send?.({ type: 'roundtable.run.exited', exitCode: 0 });
    await settle();
    actor.send({ type: 'roundtable.run.readOutput.done', output: 'stale' });
    expect(actor.getSnapshot().value).toEqual({ readingOutput: 'waitingToRead' });
  });

  it('fails with ACTOR_NOT_PROVIDED when run without its I/O actions', async () => {
    const actor = createActor(containerRunMachine, {
      input: { sessionId: 's1', mode: 'owner', pollMs: 1, budgetMs: 1 },
    }).start();
    await settle();
    expect(actor.getSnapshot().output).toMatchObject({
      outcome: 'failed',
      error: { code: 'START_FAILED', cause: { code: 'ACTOR_NOT_PROVIDED' } },
    });
  });

  it('refuses an invalid input with a typed INVALID_INPUT error', () => {
    const errors: unknown[] = [];
    const actor = createActor(containerRunMachine, {
      input: { sessionId: 's1', mode: 'adopt', pollMs: 1, budgetMs: 1 },
    });
    actor.subscribe({ error: (e) => errors.push(e) });
    actor.start();
    expect(actor.getSnapshot().status).toBe('error');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ code: 'INVALID_INPUT' });
  });
});

describe('adopt path', () => {
  const input = { sessionStartedAt: SESSION, pollMs: 1_000, budgetMs: 900_000 };

  it('gives up at once on the real incident: the container started two hours after the exec', async () => {
    const run = await runAdoption([ok(LATER)], input, { inspect });
    expect(run).toMatchObject({ observeCalls: 1, finishedAt: 0, readOutputCalls: 0 });
    expect(run.output).toEqual({ outcome: 'gave_up', reason: 'container_replaced' });
  });

  it('re-reads the start time on every poll: a replacement mid-adoption ends it at that poll', async () => {
    const run = await runAdoption([ok(EARLIER), ok(SESSION), ok(null), ok(LATER)], input, {
      inspect,
    });
    expect(run).toMatchObject({ observeCalls: 4, finishedAt: 3_000 });
    expect(run.output).toEqual({ outcome: 'gave_up', reason: 'container_replaced' });
  });

  it('reads the output and exits with the code once the marker appears', async () => {
    const run = await runAdoption([fail, ok(SESSION), ok(EARLIER, 42)], input, {
      inspect,
      output: 'log',
    });
    expect(run).toMatchObject({ observeCalls: 3, finishedAt: 2_000, readOutputCalls: 1 });
    expect(run.output).toEqual({ outcome: 'exited', exitCode: 42, output: 'log' });
  });

  it('follows the output while adopting, emitted as it comes, and stops the follow once the marker is seen', async () => {
    const clock = new SimulatedClock();
    const follow: { self: AnyActorRef | null; input: RunRef | null; stops: number } = {
      self: null,
      input: null,
      stops: 0,
    };
    let marker: { exitCode: number } | null = null;
    const machine = containerRunMachine.provide({
      actions: {
        follow: ({ self }, ref) => {
          follow.self = self;
          follow.input = ref;
        },
        unfollow: () => {
          follow.stops += 1;
        },
        observe: ({ self }, { seq }) =>
          answer(
            self,
            Promise.resolve({ containerStartedAt: SESSION, marker }),
            (output) => ({ type: 'roundtable.run.observe.done', seq, output }),
            (error) => ({ type: 'roundtable.run.observe.error', seq, error }),
          ),
        readOutput: ({ self }) =>
          answer(
            self,
            Promise.resolve('one\ntwo\n'),
            (output) => ({ type: 'roundtable.run.readOutput.done', output }),
            (error) => ({ type: 'roundtable.run.readOutput.error', error }),
          ),
      },
    });
    const actor = createActor(machine, {
      clock,
      inspect,
      input: { ...input, sessionId: 's1', mode: 'adopt', handle: 'svc-s1' },
    });
    const chunks: string[] = [];
    actor.on('roundtable.run.output', (e) => chunks.push(e.chunk));
    actor.start();
    await settle();
    expect(follow.input).toEqual({ sessionId: 's1', handle: 'svc-s1' });
    follow.self?.send({ type: 'roundtable.run.output', chunk: 'one\n' });
    clock.increment(1_000);
    await settle();
    follow.self?.send({ type: 'roundtable.run.output', chunk: 'two\n' });
    expect(chunks).toEqual(['one\n', 'two\n']);
    expect(follow.stops).toBe(0);
    marker = { exitCode: 0 };
    clock.increment(1_000);
    await settle();
    expect(follow.stops).toBe(1);
    expect(actor.getSnapshot().output).toEqual({
      outcome: 'exited',
      exitCode: 0,
      output: 'one\ntwo\n',
    });
  });

  it('trusts a marker seen in the same look that shows a replaced container', async () => {
    const run = await runAdoption([ok(LATER, 0)], input, { inspect });
    expect(run.output).toEqual({ outcome: 'exited', exitCode: 0, output: 'the output' });
  });

  it('never counts a failed look as replacement, and a failed look at the budget times out', async () => {
    const run = await runAdoption(
      [fail, fail, fail, fail],
      { ...input, budgetMs: 3_000 },
      { inspect },
    );
    expect(run).toMatchObject({ observeCalls: 4, finishedAt: 3_000 });
    expect(run.output).toEqual({ outcome: 'gave_up', reason: 'timeout' });
  });

  it('counts a hanging look as failed at its deadline, and that time against the budget', async () => {
    const clock = new SimulatedClock();
    const looks: number[] = [];
    const actor = createActor(
      containerRunMachine.provide({
        actions: {
          // Never answers: each look hangs past its deadline.
          observe: (_, { seq }) => {
            looks.push(seq);
          },
        },
      }),
      {
        clock,
        inspect,
        input: {
          ...input,
          sessionId: 's1',
          mode: 'adopt',
          handle: 'h',
          budgetMs: 2_500,
          ioTimeoutMs: 1_000,
        },
      },
    ).start();
    // looks at 0, 2000 (after 1000 hang + 1000 wait); the second ends at 3000 >= budget.
    clock.increment(1_000);
    expect(actor.getSnapshot().value).toEqual({ adopting: 'waiting' });
    clock.increment(1_000);
    expect(actor.getSnapshot().value).toEqual({ adopting: 'observing' });
    // The first look answers late, during the second: it is not taken for it
    // (its marker would end the run; it belongs to a look already counted failed).
    actor.send({
      type: 'roundtable.run.observe.done',
      seq: 0,
      output: { containerStartedAt: null, marker: { exitCode: 0 } },
    });
    actor.send({ type: 'roundtable.run.observe.error', seq: 0, error: new Error('late') });
    expect(actor.getSnapshot().value).toEqual({ adopting: 'observing' });
    expect(actor.getSnapshot().context.observations).toBe(1);
    clock.increment(999);
    expect(actor.getSnapshot().status).toBe('active');
    clock.increment(1);
    expect(looks).toEqual([0, 1]);
    expect(actor.getSnapshot().output).toEqual({ outcome: 'gave_up', reason: 'timeout' });
  });
});

describe('transition coverage', () => {
  it('the check can fail: one owner run leaves most transitions untaken', async () => {
    const partial = new CoverageRecorder();
    const actor = createActor(
      containerRunMachine.provide({
        actions: {
          startRun: ({ self }) =>
            self.send({ type: 'roundtable.run.startRun.error', error: new Error('x') }),
        },
      }),
      {
        inspect: partial.inspect,
        input: { sessionId: 's1', mode: 'owner', pollMs: 1, budgetMs: 1 },
      },
    ).start();
    await settle();
    expect(actor.getSnapshot().status).toBe('done');
    expect(partial.transitions.size).toBeGreaterThan(0);
    expect(partial.missingTransitions(containerRunMachine).length).toBeGreaterThan(10);
    expect(partial.missingStates(containerRunMachine)).toContain('containerRun.gaveUp');
  });

  it('every state and every declared transition was taken by the tests above', () => {
    expect(declaredTransitions(containerRunMachine).length).toBeGreaterThan(15);
    expect(coverage.missingTransitions(containerRunMachine)).toEqual([]);
    expect(coverage.missingStates(containerRunMachine)).toEqual([]);
  });
});
