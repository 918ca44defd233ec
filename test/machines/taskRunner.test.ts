/**
 * The TaskRunner statechart alone: every I/O actor is a deferred fake the
 * test answers, time is xstate's SimulatedClock. Every run reports to one
 * coverage recorder, and the last test checks that the runs took every
 * state and every declared transition of the chart.
 */
import { describe, expect, it } from 'vitest';
import { fromCallback, fromPromise } from 'xstate';
import {
  type AttachEvent,
  ContainerRunError,
  containerRunMachine,
  type Observation,
  type RunRef,
  type StartedRun,
  type StartRunInput,
} from '../../src/machines/containerRun.js';
import { type RunnerOutcome, taskRunnerMachine } from '../../src/machines/taskRunner.js';
import {
  declaredTransitions,
  MachineCoverage,
  RUNNER_INPUT,
  settle,
  startRunner,
} from './taskRunnerHarness.js';

const coverage = new MachineCoverage('taskRunner');
const inspect = coverage.inspect;

const STARTED_AT = new Date('2026-07-14T10:44:00Z');
const EXITED: RunnerOutcome = { outcome: 'exited', exitCode: 0, output: 'all good' };

type Runner = ReturnType<typeof startRunner>;
const value = (r: Runner) => r.actor.getSnapshot().value;

/** loading -> waiting, with the pool's answer (the place in line). */
async function toWaiting(r: Runner, position = 3) {
  await settle();
  r.fakes.loadRow.last().resolve({ status: 'queued', handle: null });
  await settle();
  r.fakes.enqueue.last().resolve(position);
  await settle();
  expect(value(r)).toBe('waiting');
}

/** waiting -> starting (the pool granted the slot). */
async function toStarting(r: Runner) {
  await toWaiting(r);
  r.actor.send({ type: 'runner_slot', sessionId: 's1' });
  await settle();
  expect(value(r)).toBe('starting');
}

/** starting -> running as the owner. */
async function toRunningOwner(r: Runner) {
  await toStarting(r);
  r.fakes.claim.last().resolve({ kind: 'claimed' });
  await settle();
  expect(value(r)).toBe('running');
}

/** loading -> adopting (the row was running when the runner started). */
async function toAdopting(r: Runner) {
  await settle();
  r.fakes.loadRow.last().resolve({ status: 'running', handle: 'svc-s1' });
  await settle();
  expect(value(r)).toBe('adopting');
}

async function toRunningAdopt(r: Runner) {
  await toAdopting(r);
  r.fakes.adopt.last().resolve({ kind: 'adopted', handle: 'svc-s1', startedAt: STARTED_AT });
  await settle();
  expect(value(r)).toBe('running');
}

async function toFinalizing(r: Runner, outcome: RunnerOutcome = EXITED) {
  await toRunningOwner(r);
  r.fakes.containerRun.last().resolve(outcome);
  await settle();
  expect(value(r)).toBe('finalizing');
}

async function toBackingOff(r: Runner) {
  await toStarting(r);
  r.fakes.claim.last().resolve({ kind: 'at_cap' });
  await settle();
  expect(value(r)).toBe('backingOff');
}

describe('owner path', () => {
  it('waits with its position, is granted the slot, claims, runs, finalizes, releases once', async () => {
    const r = startRunner({ inspect });
    await settle();
    expect(value(r)).toBe('loading');
    expect(r.fakes.loadRow.last().input).toEqual({ sessionId: 's1' });
    await toWaiting(r, 3);
    expect(r.actor.getSnapshot().context.position).toBe(3);
    const enqueued = r.fakes.enqueue.last().input;
    expect(enqueued).toMatchObject({ sessionId: 's1', userId: 'alice' });
    expect(enqueued.waiter).toBe(r.actor);
    r.actor.send({ type: 'runner_slot', sessionId: 's1' });
    await settle();
    expect(r.actor.getSnapshot().context.position).toBeNull();
    expect(r.fakes.claim.last().input).toEqual({ sessionId: 's1' });
    r.fakes.claim.last().resolve({ kind: 'claimed' });
    await settle();
    expect(r.fakes.containerRun.last().input).toEqual({
      sessionId: 's1',
      mode: 'owner',
      handle: null,
      sessionStartedAt: null,
      pollMs: RUNNER_INPUT.pollMs,
      budgetMs: RUNNER_INPUT.adoptBudgetMs,
    });
    r.fakes.containerRun.last().resolve(EXITED);
    await settle();
    expect(r.fakes.finalize.last().input).toEqual({ sessionId: 's1', outcome: EXITED });
    expect(r.fakes.released).toEqual([]);
    r.fakes.finalize.last().resolve('finished');
    await settle();
    const snap = r.actor.getSnapshot();
    expect(snap.status).toBe('done');
    expect(snap.output).toEqual({ ending: 'finished', outcome: EXITED });
    expect(r.fakes.released).toEqual(['s1']);
    expect(r.errors).toEqual([]);
  });

  it('passes its I/O deadline down to the run', async () => {
    const r = startRunner({ inspect, input: { ioTimeoutMs: 7_000 } });
    await toRunningOwner(r);
    expect(r.fakes.containerRun.last().input.ioTimeoutMs).toBe(7_000);
  });

  it('a slot granted before the pool answered the position still starts the claim', async () => {
    const r = startRunner({ inspect });
    await settle();
    r.fakes.loadRow.last().resolve({ status: 'queued', handle: null });
    await settle();
    r.actor.send({ type: 'runner_slot', sessionId: 's1' });
    await settle();
    expect(value(r)).toBe('starting');
    // The abandoned enqueue call answering late changes nothing.
    r.fakes.enqueue.last().resolve(9);
    await settle();
    expect(value(r)).toBe('starting');
    expect(r.actor.getSnapshot().context.position).toBeNull();
  });

  it('ignores a slot grant outside waiting: one claim only', async () => {
    const r = startRunner({ inspect });
    await toStarting(r);
    r.actor.send({ type: 'runner_slot', sessionId: 's1' });
    await settle();
    expect(r.fakes.claim.count).toBe(1);
    r.fakes.claim.last().resolve({ kind: 'claimed' });
    await settle();
    r.actor.send({ type: 'runner_slot', sessionId: 's1' });
    await settle();
    expect(value(r)).toBe('running');
    expect(r.fakes.claim.count).toBe(1);
  });

  it('claim lost to another node: gives the slot back, waits a poll on the clock, queues again', async () => {
    const r = startRunner({ inspect });
    await toBackingOff(r);
    expect(r.fakes.released).toEqual(['s1']);
    // The pool re-reads the rows, which count the other node's run: index and rows agree.
    expect(r.fakes.reloads).toBe(1);
    expect(r.fakes.enqueue.count).toBe(1);
    r.clock.increment(RUNNER_INPUT.pollMs - 1);
    await settle();
    expect(value(r)).toBe('backingOff');
    r.clock.increment(1);
    await settle();
    expect(value(r)).toBe('waiting');
    expect(r.fakes.enqueue.count).toBe(2);
    r.fakes.enqueue.last().resolve(1);
    r.actor.send({ type: 'runner_slot', sessionId: 's1' });
    await settle();
    r.fakes.claim.last().resolve({ kind: 'claimed' });
    await settle();
    expect(value(r)).toBe('running');
    expect(r.fakes.claim.count).toBe(2);
  });

  it('a claim that finds the row no longer queued ends the runner as gone, with no run', async () => {
    const r = startRunner({ inspect });
    await toStarting(r);
    r.fakes.claim.last().resolve({ kind: 'gone' });
    await settle();
    expect(r.actor.getSnapshot().output).toEqual({ ending: 'gone', outcome: null });
    expect(r.fakes.containerRun.count).toBe(0);
    expect(r.fakes.released).toEqual(['s1']);
  });

  it.each(['succeeded', 'failed', 'cancelled'] as const)(
    'a row already %s: the runner leaves at once as gone',
    async (status) => {
      const r = startRunner({ inspect });
      await settle();
      r.fakes.loadRow.last().resolve({ status, handle: 'svc-s1' });
      await settle();
      expect(r.actor.getSnapshot().output).toEqual({ ending: 'gone', outcome: null });
      expect(r.fakes.enqueue.count + r.fakes.adopt.count).toBe(0);
    },
  );

  it('a finish CAS lost to someone else ends the runner as gone', async () => {
    const r = startRunner({ inspect });
    await toFinalizing(r);
    r.fakes.finalize.last().resolve('gone');
    await settle();
    expect(r.actor.getSnapshot().output).toEqual({ ending: 'gone', outcome: EXITED });
  });
});

describe('start failure and give-up (with the real ContainerRun chart as the child)', () => {
  it('a start failure is finalized as failed START_FAILED, cause kept', async () => {
    const cause = new Error('no such image');
    const child = containerRunMachine.provide({
      actors: { startRun: fromPromise<StartedRun, StartRunInput>(() => Promise.reject(cause)) },
    });
    const r = startRunner({ inspect, containerRun: child });
    await toStarting(r);
    r.fakes.claim.last().resolve({ kind: 'claimed' });
    await settle();
    expect(value(r)).toBe('finalizing');
    const outcome = r.fakes.finalize.last().input.outcome;
    expect(outcome).toMatchObject({ outcome: 'failed', exitCode: null });
    if (outcome.outcome !== 'failed') throw new Error('expected failed');
    expect(outcome.error).toBeInstanceOf(ContainerRunError);
    expect(outcome.error.code).toBe('START_FAILED');
    expect(outcome.error.cause).toBe(cause);
  });

  it('owner run: exec output ends the child, and its outcome reaches finalize', async () => {
    const child = containerRunMachine.provide({
      actors: {
        startRun: fromPromise<StartedRun, StartRunInput>(async () => ({
          handle: 'svc-s1',
          startedAt: STARTED_AT.toISOString(),
        })),
        attach: fromCallback<AttachEvent, RunRef>(({ sendBack }) => {
          sendBack({ type: 'exited', exitCode: 2 });
        }),
        readOutput: fromPromise<string, RunRef>(async () => 'boom'),
      },
    });
    const r = startRunner({ inspect, containerRun: child });
    await toStarting(r);
    r.fakes.claim.last().resolve({ kind: 'claimed' });
    await settle(10);
    expect(r.fakes.finalize.last().input.outcome).toEqual({
      outcome: 'exited',
      exitCode: 2,
      output: 'boom',
    });
  });

  it('adopted run that never shows its marker gives up (timeout) on the simulated clock; finalize gets the give-up (it fails and re-queues)', async () => {
    let looks = 0;
    const child = containerRunMachine.provide({
      actors: {
        observe: fromPromise<Observation, RunRef>(async () => {
          looks += 1;
          return { containerStartedAt: null, marker: null };
        }),
      },
    });
    const r = startRunner({
      inspect,
      containerRun: child,
      input: { pollMs: 1_000, adoptBudgetMs: 5_000 },
    });
    await toRunningAdopt(r);
    for (let t = 0; t < 10 && value(r) === 'running'; t++) {
      r.clock.increment(1_000);
      await settle();
    }
    expect(value(r)).toBe('finalizing');
    expect(looks).toBeGreaterThan(1);
    expect(r.fakes.finalize.last().input.outcome).toEqual({
      outcome: 'gave_up',
      reason: 'timeout',
    });
    r.fakes.finalize.last().resolve('finished');
    await settle();
    expect(r.actor.getSnapshot().output?.ending).toBe('finished');
  });
});

describe('adopt path', () => {
  it('a running row is adopted: the fenced handle and start time drive an adopt-mode run', async () => {
    const r = startRunner({ inspect });
    await toAdopting(r);
    expect(r.fakes.enqueue.count).toBe(0);
    expect(r.fakes.adopt.last().input).toMatchObject({ sessionId: 's1', userId: 'alice' });
    expect(r.fakes.adopt.last().input.waiter).toBe(r.actor);
    r.fakes.adopt.last().resolve({ kind: 'adopted', handle: 'svc-s1', startedAt: STARTED_AT });
    await settle();
    expect(r.fakes.containerRun.last().input).toMatchObject({
      mode: 'adopt',
      handle: 'svc-s1',
      sessionStartedAt: STARTED_AT,
      budgetMs: RUNNER_INPUT.adoptBudgetMs,
    });
    const gaveUp: RunnerOutcome = { outcome: 'gave_up', reason: 'container_replaced' };
    r.fakes.containerRun.last().resolve(gaveUp);
    await settle();
    expect(r.fakes.finalize.last().input.outcome).toEqual(gaveUp);
    r.fakes.finalize.last().resolve('finished');
    await settle();
    expect(r.actor.getSnapshot().output).toEqual({ ending: 'finished', outcome: gaveUp });
    expect(r.fakes.claim.count).toBe(0);
  });

  it('an adopted row with no handle is finalized as orphaned, with nothing to poll', async () => {
    const r = startRunner({ inspect });
    await toAdopting(r);
    r.fakes.adopt.last().resolve({ kind: 'adopted', handle: null, startedAt: null });
    await settle();
    expect(value(r)).toBe('finalizing');
    expect(r.fakes.containerRun.count).toBe(0);
    expect(r.fakes.finalize.last().input.outcome).toEqual({ outcome: 'orphaned' });
  });

  it('an adopt CAS that finds the row moved on ends the runner as gone', async () => {
    const r = startRunner({ inspect });
    await toAdopting(r);
    r.fakes.adopt.last().resolve({ kind: 'gone' });
    await settle();
    expect(r.actor.getSnapshot().output).toEqual({ ending: 'gone', outcome: null });
    expect(r.fakes.released).toEqual(['s1']);
  });
});

describe('the pool restarted (it knows no waiter)', () => {
  it('a waiting runner enqueues again and keeps waiting; the new answer is its position', async () => {
    const r = startRunner({ inspect });
    await toWaiting(r, 3);
    r.actor.send({ type: 'pool_restarted' });
    await settle();
    expect(value(r)).toBe('waiting');
    expect(r.actor.getSnapshot().context.position).toBeNull();
    expect(r.fakes.enqueue.count).toBe(2);
    expect(r.fakes.enqueue.last().input.waiter).toBe(r.actor);
    expect(r.fakes.released).toEqual([]);
    r.fakes.enqueue.last().resolve(2);
    await settle();
    expect(r.actor.getSnapshot().context.position).toBe(2);
    expect(r.fakes.rejoined).toEqual([]);
  });

  it('a pool that is down answers no position (null); the runner still waits for its grant', async () => {
    const r = startRunner({ inspect });
    await settle();
    r.fakes.loadRow.last().resolve({ status: 'queued', handle: null });
    await settle();
    r.fakes.enqueue.last().resolve(null);
    await settle();
    expect(value(r)).toBe('waiting');
    expect(r.actor.getSnapshot().context.position).toBeNull();
  });

  const HOLDING: Array<[string, (r: Runner) => Promise<void>]> = [
    ['starting', toStarting],
    ['adopting', toAdopting],
    ['running', toRunningOwner],
    ['finalizing', (r) => toFinalizing(r)],
  ];
  it.each(HOLDING)(
    'in %s: tells the new pool it holds the slot, and carries on',
    async (name, reach) => {
      const r = startRunner({ inspect });
      await reach(r);
      const enqueues = r.fakes.enqueue.count;
      r.actor.send({ type: 'pool_restarted' });
      await settle();
      expect(value(r)).toBe(name);
      expect(r.fakes.rejoined).toEqual([{ sessionId: 's1', userId: 'alice' }]);
      expect(r.fakes.enqueue.count).toBe(enqueues);
      expect(r.fakes.released).toEqual([]);
    },
  );

  it('loading and backing off ignore it (they enqueue or adopt on their own next)', async () => {
    const r = startRunner({ inspect });
    await settle();
    r.actor.send({ type: 'pool_restarted' });
    await toBackingOff(r);
    r.actor.send({ type: 'pool_restarted' });
    await settle();
    expect(value(r)).toBe('backingOff');
    expect(r.fakes.rejoined).toEqual([]);
    expect(r.fakes.enqueue.count).toBe(1);
  });
});

/** Each state cancel is accepted in, how to get there, and the handle stopRun must get. */
const CANCELLABLE: Array<[string, (r: Runner) => Promise<void>, string | null, number]> = [
  ['loading', async () => settle(), null, 1],
  ['waiting', (r) => toWaiting(r), null, 0],
  ['starting', toStarting, null, 1],
  ['backingOff', toBackingOff, null, 0],
  ['adopting', toAdopting, null, 1],
  ['running (owner)', toRunningOwner, null, 1],
  ['running (adopt)', toRunningAdopt, 'svc-s1', 1],
  ['finalizing', (r) => toFinalizing(r), null, 1],
];

describe('cancel', () => {
  it.each(CANCELLABLE)(
    'in %s: abandons the work in flight, stops the run, ends cancelled, releases the slot',
    async (_name, reach, handle, expectedInFlight) => {
      const r = startRunner({ inspect });
      await reach(r);
      const inFlight = (
        [
          r.fakes.loadRow,
          r.fakes.enqueue,
          r.fakes.claim,
          r.fakes.adopt,
          r.fakes.containerRun,
          r.fakes.finalize,
        ] as Array<{ all: ReadonlyArray<{ answered: boolean; signal: AbortSignal }> }>
      )
        .flatMap((c) => c.all)
        .filter((c) => !c.answered);
      expect(inFlight.length).toBe(expectedInFlight);
      r.actor.send({ type: 'cancel' });
      await settle();
      expect(value(r)).toBe('cancelling');
      expect(r.actor.getSnapshot().context.ending).toBe('cancelled');
      // The actor invoked by the state left is stopped: its signal is aborted.
      for (const call of inFlight) expect(call.signal.aborted).toBe(true);
      expect(r.fakes.stopRun.last().input).toEqual({ sessionId: 's1', handle });
      // A second cancel (the user clicks twice) starts no second stop.
      r.actor.send({ type: 'cancel' });
      await settle();
      expect(r.fakes.stopRun.count).toBe(1);
      r.fakes.stopRun.last().resolve();
      await settle();
      expect(r.actor.getSnapshot().status).toBe('done');
      expect(r.actor.getSnapshot().output?.ending).toBe('cancelled');
      expect(r.fakes.released.at(-1)).toBe('s1');
      // Nothing fires later: the back-off timer, if any, was cancelled with its state.
      r.clock.increment(RUNNER_INPUT.pollMs * 10);
      await settle();
      expect(r.fakes.enqueue.count).toBeLessThanOrEqual(1);
      expect(r.errors).toEqual([]);
    },
  );

  it('covers every state that declares cancel, and no other', () => {
    const declared = declaredTransitions(taskRunnerMachine)
      .filter((k) => k.includes("on 'cancel'"))
      .map((k) => k.split(' ')[0]?.replace('taskRunner.', ''));
    const tested = new Set(CANCELLABLE.map(([name]) => name.split(' ')[0]));
    expect([...tested].sort()).toEqual([...new Set(declared)].sort());
  });
});

describe('an I/O error crashes the runner (its supervisor restarts it)', () => {
  const crashes: Array<[string, (r: Runner) => Promise<{ reject(e: unknown): void }>]> = [
    [
      'loadRow',
      async (r) => {
        await settle();
        return r.fakes.loadRow.last();
      },
    ],
    [
      'enqueue',
      async (r) => {
        await settle();
        r.fakes.loadRow.last().resolve({ status: 'queued', handle: null });
        await settle();
        return r.fakes.enqueue.last();
      },
    ],
    [
      'claim',
      async (r) => {
        await toStarting(r);
        return r.fakes.claim.last();
      },
    ],
    [
      'adopt',
      async (r) => {
        await toAdopting(r);
        return r.fakes.adopt.last();
      },
    ],
    [
      'containerRun',
      async (r) => {
        await toRunningOwner(r);
        return r.fakes.containerRun.last();
      },
    ],
    [
      'finalize',
      async (r) => {
        await toFinalizing(r);
        return r.fakes.finalize.last();
      },
    ],
    [
      'stopRun',
      async (r) => {
        await toWaiting(r);
        r.actor.send({ type: 'cancel' });
        await settle();
        return r.fakes.stopRun.last();
      },
    ],
  ];

  it.each(crashes)(
    'a failing %s: the runner errors with the cause, and does nothing more',
    async (_n, reach) => {
      const r = startRunner({ inspect });
      const call = await reach(r);
      const calls = () =>
        Object.values(r.fakes).reduce(
          (n, c) => n + (typeof c === 'object' && 'count' in c ? c.count : 0),
          0,
        );
      const before = calls();
      const cause = new Error('connection reset');
      call.reject(cause);
      await settle();
      expect(r.actor.getSnapshot().status).toBe('error');
      expect(r.errors).toEqual([cause]);
      r.clock.increment(RUNNER_INPUT.pollMs * 10);
      await settle();
      expect(calls()).toBe(before);
      // A crash runs no exit action: freeing the slot is the pool monitor's job.
      expect(r.fakes.released).toEqual([]);
    },
  );
});

describe('transition coverage', () => {
  it('the check can fail: a runner that only loads a finished row leaves most of the chart untaken', async () => {
    const partial = new MachineCoverage('taskRunner');
    const r = startRunner({ inspect: partial.inspect });
    await settle();
    r.fakes.loadRow.last().resolve({ status: 'succeeded', handle: null });
    await settle();
    expect(r.actor.getSnapshot().status).toBe('done');
    expect(partial.transitions.size).toBe(1);
    expect(partial.missingTransitions(taskRunnerMachine).length).toBe(
      declaredTransitions(taskRunnerMachine).length - 1,
    );
    expect(partial.missingStates(taskRunnerMachine)).toContain('taskRunner.backingOff');
  });

  it('every state and every declared transition was taken by the tests above', () => {
    expect(declaredTransitions(taskRunnerMachine).length).toBeGreaterThanOrEqual(22);
    expect(coverage.missingTransitions(taskRunnerMachine)).toEqual([]);
    expect(coverage.missingStates(taskRunnerMachine)).toEqual([]);
  });
});
