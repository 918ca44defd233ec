/**
 * The TaskRunner statechart alone, on the dispatch engine: a runner starts
 * only when its session already holds a slot (`granted`) or when it is asked
 * to adopt an orphan (`adopt`); it never waits in line. Every I/O actor is a
 * deferred fake the test answers, time is xstate's SimulatedClock. Every run
 * reports to one coverage recorder, and the last test checks that the runs
 * took every state and every declared transition of the chart.
 */
import { describe, expect, it } from 'vitest';
import { ContainerRunError, containerRunMachine } from '../../src/machines/containerRun.js';
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

/** Every fake I/O call not answered yet (the work in flight). */
const unanswered = (r: Runner) =>
  (
    [
      r.fakes.loadRow,
      r.fakes.adopt,
      r.fakes.containerRun,
      r.fakes.finalize,
      r.fakes.stopRun,
    ] as Array<{
      all: ReadonlyArray<{
        answered: boolean;
        signal: AbortSignal | null;
        reject(e: unknown): void;
      }>;
    }>
  )
    .flatMap((c) => c.all)
    .filter((c) => !c.answered);

/** loading -> running as the owner (the tick granted the slot). */
async function toRunningOwner(r: Runner) {
  await settle();
  r.fakes.loadRow.last().resolve({ kind: 'run' });
  await settle();
  expect(value(r)).toBe('running');
}

/** loading -> adopting (the row is running and this runner may adopt it). */
async function toAdopting(r: Runner) {
  await settle();
  r.fakes.loadRow.last().resolve({ kind: 'adopt' });
  await settle();
  expect(value(r)).toBe('adopting');
}

/** adopting -> running in adopt mode on the fenced row's run. */
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

describe('granted: the session already holds its slot', () => {
  it('loads the row, holds the slot once, runs, finalizes, releases the slot exactly once at the end', async () => {
    const r = startRunner({ inspect });
    await settle();
    expect(value(r)).toBe('loading');
    expect(r.fakes.loadRow.last().input).toEqual({ sessionId: 's1', start: 'granted' });
    // Nothing is held before the row says this is a run to start.
    expect(r.fakes.held).toEqual([]);
    r.fakes.loadRow.last().resolve({ kind: 'run' });
    await settle();
    expect(value(r)).toBe('running');
    expect(r.fakes.held).toEqual(['s1']);
    expect(r.fakes.adopt.count).toBe(0);
    expect(r.actor.getSnapshot().context.mode).toBe('owner');
    expect(r.fakes.containerRun.count).toBe(1);
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
    expect(value(r)).toBe('finalizing');
    expect(r.fakes.finalize.last().input).toEqual({ sessionId: 's1', outcome: EXITED });
    expect(r.fakes.released).toEqual([]);
    r.fakes.finalize.last().resolve('finished');
    await settle();
    const snap = r.actor.getSnapshot();
    expect(snap.status).toBe('done');
    expect(snap.output).toEqual({ ending: 'finished', outcome: EXITED });
    expect(r.fakes.held).toEqual(['s1']);
    expect(r.fakes.released).toEqual(['s1']);
    expect(r.fakes.finalize.count).toBe(1);
    expect(r.fakes.stopRun.count).toBe(0);
    expect(r.errors).toEqual([]);
  });

  it('passes its I/O deadline down to the run', async () => {
    const r = startRunner({ inspect, input: { ioTimeoutMs: 7_000 } });
    await toRunningOwner(r);
    expect(r.fakes.containerRun.last().input.ioTimeoutMs).toBe(7_000);
  });

  it('a row that is gone (finished, cancelled, or a live owner’s) ends the runner as gone, with no run started', async () => {
    const r = startRunner({ inspect });
    await settle();
    r.fakes.loadRow.last().resolve({ kind: 'gone' });
    await settle();
    const snap = r.actor.getSnapshot();
    expect(snap.status).toBe('done');
    expect(snap.output).toEqual({ ending: 'gone', outcome: null });
    expect(r.fakes.adopt.count + r.fakes.containerRun.count + r.fakes.finalize.count).toBe(0);
    expect(r.fakes.stopRun.count).toBe(0);
    expect(r.fakes.held).toEqual([]);
    // The granted slot goes back all the same (the exit action).
    expect(r.fakes.released).toEqual(['s1']);
    expect(r.errors).toEqual([]);
  });

  it('a finish CAS lost to someone else ends the runner as gone, the outcome kept', async () => {
    const r = startRunner({ inspect });
    await toFinalizing(r);
    r.fakes.finalize.last().resolve('gone');
    await settle();
    expect(r.actor.getSnapshot().output).toEqual({ ending: 'gone', outcome: EXITED });
    expect(r.fakes.released).toEqual(['s1']);
  });

  it('an event of the old engine (runner_slot) is not in the chart: it starts nothing', async () => {
    const r = startRunner({ inspect });
    await toRunningOwner(r);
    // A removed event of the old engine is not part of the chart any more.
    r.actor.send({ type: 'runner_slot', sessionId: 's1' } as never);
    await settle();
    expect(value(r)).toBe('running');
    expect(r.fakes.loadRow.count).toBe(1);
    expect(r.fakes.containerRun.count).toBe(1);
    expect(r.fakes.held).toEqual(['s1']);
  });
});

describe('start failure and give-up (with the real ContainerRun chart as the child)', () => {
  it('a start failure is finalized as failed START_FAILED, cause kept', async () => {
    const cause = new Error('no such image');
    const child = containerRunMachine.provide({
      actions: {
        startRun: ({ self }) =>
          void Promise.resolve().then(() =>
            self.send({ type: 'roundtable.run.startRun.error', error: cause }),
          ),
      },
    });
    const r = startRunner({ inspect, containerRun: child });
    await settle();
    r.fakes.loadRow.last().resolve({ kind: 'run' });
    await settle(10);
    expect(value(r)).toBe('finalizing');
    expect(r.fakes.held).toEqual(['s1']);
    const outcome = r.fakes.finalize.last().input.outcome;
    expect(outcome).toMatchObject({ outcome: 'failed', exitCode: null });
    if (outcome.outcome !== 'failed') throw new Error('expected failed');
    expect(outcome.error).toBeInstanceOf(ContainerRunError);
    expect(outcome.error.code).toBe('START_FAILED');
    expect(outcome.error.cause).toBe(cause);
    r.fakes.finalize.last().resolve('finished');
    await settle();
    expect(r.actor.getSnapshot().output).toEqual({ ending: 'finished', outcome });
    expect(r.fakes.released).toEqual(['s1']);
  });

  it('owner run: exec output ends the child, and its outcome reaches finalize', async () => {
    const later = (f: () => void) => void Promise.resolve().then(f);
    const child = containerRunMachine.provide({
      actions: {
        startRun: ({ self }) =>
          later(() =>
            self.send({
              type: 'roundtable.run.startRun.done',
              output: { handle: 'svc-s1', startedAt: STARTED_AT.toISOString() },
            }),
          ),
        attach: ({ self }) =>
          later(() => self.send({ type: 'roundtable.run.exited', exitCode: 2 })),
        readOutput: ({ self }) =>
          later(() => self.send({ type: 'roundtable.run.readOutput.done', output: 'boom' })),
      },
    });
    const r = startRunner({ inspect, containerRun: child });
    await settle();
    r.fakes.loadRow.last().resolve({ kind: 'run' });
    await settle(10);
    expect(r.fakes.finalize.last().input.outcome).toEqual({
      outcome: 'exited',
      exitCode: 2,
      output: 'boom',
    });
  });

  it('adopted run that never shows its marker gives up (timeout) on the simulated clock; finalize gets the give-up', async () => {
    let looks = 0;
    const child = containerRunMachine.provide({
      actions: {
        observe: ({ self }, { seq }) => {
          looks += 1;
          void Promise.resolve().then(() =>
            self.send({
              type: 'roundtable.run.observe.done',
              seq,
              output: { containerStartedAt: null, marker: null },
            }),
          );
        },
      },
    });
    const r = startRunner({
      inspect,
      containerRun: child,
      input: { start: 'adopt', pollMs: 1_000, adoptBudgetMs: 5_000 },
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
    expect(r.fakes.released).toEqual(['s1']);
  });
});

describe('adopt path', () => {
  it('the start kind reaches loadRow: an adopt start is asked as such', async () => {
    const r = startRunner({ inspect, input: { start: 'adopt' } });
    await settle();
    expect(r.fakes.loadRow.last().input).toEqual({ sessionId: 's1', start: 'adopt' });
  });

  it('a row to adopt is fenced; the fenced handle and start time drive an adopt-mode run', async () => {
    const r = startRunner({ inspect, input: { start: 'adopt' } });
    await toAdopting(r);
    expect(r.fakes.adopt.count).toBe(1);
    expect(r.fakes.adopt.last().input).toEqual({ sessionId: 's1', userId: 'alice' });
    // The adopt step holds the slot itself, for the runner that asked.
    expect(r.fakes.adopt.last().self).toBe(r.actor);
    expect(r.fakes.held).toEqual([]);
    expect(r.fakes.containerRun.count).toBe(0);
    r.fakes.adopt.last().resolve({ kind: 'adopted', handle: 'svc-s1', startedAt: STARTED_AT });
    await settle();
    expect(value(r)).toBe('running');
    const ctx = r.actor.getSnapshot().context;
    expect(ctx.mode).toBe('adopt');
    expect(ctx.handle).toBe('svc-s1');
    expect(ctx.sessionStartedAt).toBe(STARTED_AT);
    expect(r.fakes.containerRun.last().input).toEqual({
      sessionId: 's1',
      mode: 'adopt',
      handle: 'svc-s1',
      sessionStartedAt: STARTED_AT,
      pollMs: RUNNER_INPUT.pollMs,
      budgetMs: RUNNER_INPUT.adoptBudgetMs,
    });
    const gaveUp: RunnerOutcome = { outcome: 'gave_up', reason: 'container_replaced' };
    r.fakes.containerRun.last().resolve(gaveUp);
    await settle();
    expect(r.fakes.finalize.last().input).toEqual({ sessionId: 's1', outcome: gaveUp });
    r.fakes.finalize.last().resolve('finished');
    await settle();
    expect(r.actor.getSnapshot().output).toEqual({ ending: 'finished', outcome: gaveUp });
    expect(r.fakes.held).toEqual([]);
    expect(r.fakes.released).toEqual(['s1']);
  });

  it('a granted runner that finds its own run (it crashed and was restarted) adopts it too', async () => {
    const r = startRunner({ inspect, input: { start: 'granted' } });
    await toRunningAdopt(r);
    expect(r.fakes.containerRun.last().input).toMatchObject({ mode: 'adopt', handle: 'svc-s1' });
  });

  it('an adopted row with no handle is finalized as orphaned, with nothing to poll', async () => {
    const r = startRunner({ inspect, input: { start: 'adopt' } });
    await toAdopting(r);
    r.fakes.adopt.last().resolve({ kind: 'adopted', handle: null, startedAt: null });
    await settle();
    expect(value(r)).toBe('finalizing');
    expect(r.actor.getSnapshot().context.outcome).toEqual({ outcome: 'orphaned' });
    expect(r.fakes.containerRun.count).toBe(0);
    expect(r.fakes.finalize.last().input).toEqual({
      sessionId: 's1',
      outcome: { outcome: 'orphaned' },
    });
    r.fakes.finalize.last().resolve('finished');
    await settle();
    expect(r.actor.getSnapshot().output).toEqual({
      ending: 'finished',
      outcome: { outcome: 'orphaned' },
    });
    expect(r.fakes.released).toEqual(['s1']);
  });

  it('an adopt CAS that finds the row moved on ends the runner as gone, with no run', async () => {
    const r = startRunner({ inspect, input: { start: 'adopt' } });
    await toAdopting(r);
    r.fakes.adopt.last().resolve({ kind: 'gone' });
    await settle();
    expect(r.actor.getSnapshot().output).toEqual({ ending: 'gone', outcome: null });
    expect(r.fakes.containerRun.count + r.fakes.finalize.count).toBe(0);
    expect(r.fakes.released).toEqual(['s1']);
  });
});

describe('the pool restarted (it watches no holder)', () => {
  const HOLDING: Array<[string, (r: Runner) => Promise<void>, number]> = [
    ['running (owner)', toRunningOwner, 1],
    ['running (adopt)', toRunningAdopt, 0],
    ['finalizing', (r) => toFinalizing(r), 1],
  ];
  it.each(HOLDING)(
    'in %s: holds the slot again, and carries on',
    async (name, reach, heldBefore) => {
      const r = startRunner({ inspect });
      await reach(r);
      expect(r.fakes.held.length).toBe(heldBefore);
      const inFlight = unanswered(r);
      r.actor.send({ type: 'roundtable.runner.pool_restarted' });
      await settle();
      expect(value(r)).toBe(name.split(' ')[0]);
      expect(r.fakes.held).toEqual(Array(heldBefore + 1).fill('s1'));
      // The work in flight carries on: nothing was restarted or abandoned.
      for (const call of inFlight) expect(call.signal?.aborted ?? false).toBe(false);
      expect(r.fakes.stopRun.count).toBe(0);
      expect(unanswered(r).length).toBe(inFlight.length);
      expect(r.fakes.released).toEqual([]);
      // Each restart is told again.
      r.actor.send({ type: 'roundtable.runner.pool_restarted' });
      await settle();
      expect(r.fakes.held).toEqual(Array(heldBefore + 2).fill('s1'));
    },
  );

  it('loading ignores it (it holds on its own next, on the run transition)', async () => {
    const r = startRunner({ inspect });
    await settle();
    r.actor.send({ type: 'roundtable.runner.pool_restarted' });
    await settle();
    expect(value(r)).toBe('loading');
    expect(r.fakes.loadRow.count).toBe(1);
    expect(r.fakes.held).toEqual([]);
    // Its load still lands.
    r.fakes.loadRow.last().resolve({ kind: 'run' });
    await settle();
    expect(value(r)).toBe('running');
    expect(r.fakes.held).toEqual(['s1']);
  });

  it('adopting holds again without abandoning the adopt CAS in flight (its hold may have landed already)', async () => {
    const r = startRunner({ inspect });
    await toAdopting(r);
    r.actor.send({ type: 'roundtable.runner.pool_restarted' });
    await settle();
    expect(value(r)).toBe('adopting');
    expect(r.fakes.adopt.count).toBe(1);
    expect(r.fakes.stopRun.count).toBe(0);
    expect(r.fakes.held).toEqual(['s1']);
    expect(r.fakes.released).toEqual([]);
  });

  it('is declared in adopting, running and finalizing only', () => {
    const declared = declaredTransitions(taskRunnerMachine)
      .filter((k) => k.includes("on 'roundtable.runner.pool_restarted'"))
      .map((k) => k.split(' ')[0]?.replace('taskRunner.', ''));
    expect(declared.sort()).toEqual(['adopting', 'finalizing', 'running']);
  });
});

/** Each state cancel is accepted in, how to get there, the handle stopRun must get, and the I/O in flight. */
const CANCELLABLE: Array<[string, (r: Runner) => Promise<void>, string | null, number]> = [
  ['loading', async () => settle(), null, 1],
  ['adopting', toAdopting, null, 1],
  ['running (owner)', toRunningOwner, null, 1],
  ['running (adopt)', toRunningAdopt, 'svc-s1', 1],
  ['finalizing', (r) => toFinalizing(r), null, 1],
];

describe('cancel', () => {
  it.each(CANCELLABLE)(
    'in %s: abandons the work in flight, stops the run, ends cancelled, releases the slot once',
    async (_name, reach, handle, expectedInFlight) => {
      const r = startRunner({ inspect });
      await reach(r);
      const inFlight = unanswered(r);
      expect(inFlight.length).toBe(expectedInFlight);
      r.actor.send({ type: 'roundtable.runner.cancel' });
      await settle();
      expect(value(r)).toBe('cancelling');
      expect(r.actor.getSnapshot().context.ending).toBe('cancelled');
      // The child invoked by the state left is stopped (its signal aborted);
      // an action's call is abandoned by stopRun (the wrapper aborts the run's I/O).
      for (const call of inFlight) if (call.signal !== null) expect(call.signal.aborted).toBe(true);
      expect(r.fakes.stopRun.count).toBe(1);
      expect(r.fakes.stopRun.last().input).toEqual({ sessionId: 's1', handle });
      expect(r.fakes.released).toEqual([]);
      // A second cancel (the user clicks twice) starts no second stop.
      r.actor.send({ type: 'roundtable.runner.cancel' });
      // Nor does a pool restart while cancelling hold the slot again.
      const held = r.fakes.held.length;
      r.actor.send({ type: 'roundtable.runner.pool_restarted' });
      await settle();
      expect(r.fakes.stopRun.count).toBe(1);
      expect(r.fakes.held.length).toBe(held);
      // The abandoned call answering late changes nothing.
      for (const call of inFlight) call.reject(new Error('aborted'));
      await settle();
      expect(value(r)).toBe('cancelling');
      r.fakes.stopRun.last().resolve();
      await settle();
      const snap = r.actor.getSnapshot();
      expect(snap.status).toBe('done');
      expect(snap.output?.ending).toBe('cancelled');
      expect(r.fakes.released).toEqual(['s1']);
      r.clock.increment(RUNNER_INPUT.pollMs * 10);
      await settle();
      expect(r.errors).toEqual([]);
    },
  );

  it('covers every state that declares cancel, and no other', () => {
    const declared = declaredTransitions(taskRunnerMachine)
      .filter((k) => k.includes("on 'roundtable.runner.cancel'"))
      .map((k) => k.split(' ')[0]?.replace('taskRunner.', ''));
    const tested = new Set(CANCELLABLE.map(([name]) => name.split(' ')[0]));
    expect([...tested].sort()).toEqual([...new Set(declared)].sort());
    expect([...tested].sort()).toEqual(['adopting', 'finalizing', 'loading', 'running']);
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
        await toRunningOwner(r);
        r.actor.send({ type: 'roundtable.runner.cancel' });
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
      const heldBefore = r.fakes.held.length;
      const cause = new Error('connection reset');
      call.reject(cause);
      await settle();
      expect(r.actor.getSnapshot().status).toBe('error');
      expect(r.errors).toEqual([cause]);
      r.actor.send({ type: 'roundtable.runner.pool_restarted' });
      r.actor.send({ type: 'roundtable.runner.cancel' });
      r.clock.increment(RUNNER_INPUT.pollMs * 10);
      await settle();
      expect(calls()).toBe(before);
      expect(r.fakes.held.length).toBe(heldBefore);
      // A crash runs no exit action: freeing the slot is the pool monitor's job.
      expect(r.fakes.released).toEqual([]);
    },
  );
});

describe('transition coverage', () => {
  it('the check can fail: a runner that only loads a gone row leaves most of the chart untaken', async () => {
    const partial = new MachineCoverage('taskRunner');
    const r = startRunner({ inspect: partial.inspect });
    await settle();
    r.fakes.loadRow.last().resolve({ kind: 'gone' });
    await settle();
    expect(r.actor.getSnapshot().status).toBe('done');
    // The one transition taken is loadRow's third answer (gone).
    expect(partial.transitions.size).toBe(1);
    const [taken] = [...partial.transitions];
    expect(taken).toBe("taskRunner.loading on 'roundtable.runner.loadRow.done' #2");
    expect(partial.missingTransitions(taskRunnerMachine).length).toBe(
      declaredTransitions(taskRunnerMachine).length - 1,
    );
    expect(partial.missingStates(taskRunnerMachine)).toEqual(
      expect.arrayContaining([
        'taskRunner.adopting',
        'taskRunner.running',
        'taskRunner.cancelling',
      ]),
    );
  });

  it('every state and every declared transition was taken by the tests above', () => {
    expect(declaredTransitions(taskRunnerMachine).length).toBeGreaterThanOrEqual(15);
    expect(coverage.missingTransitions(taskRunnerMachine)).toEqual([]);
    expect(coverage.missingStates(taskRunnerMachine)).toEqual([]);
  });
});
