/**
 * The Reconciler's loop alone: the pass is a deferred fake the test answers,
 * time is xstate's SimulatedClock. A random property checks that passes never
 * overlap and that every tick's caller hears back from exactly the pass that
 * covers it; every state and transition of the chart is taken.
 */
import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { createActor, SimulatedClock } from 'xstate';
import { reconcileLoopMachine } from '../../src/machines/reconcileLoop.js';
import { Calls, declaredTransitions, MachineCoverage, settle } from './taskRunnerHarness.js';

const coverage = new MachineCoverage('reconciler');

/** What the test's `halts` guard names final. */
class FinalError extends Error {}
const PERIOD = 60_000;

function startLoop(inspect: MachineCoverage['inspect'] = coverage.inspect) {
  const clock = new SimulatedClock();
  const passes = new Calls<{ boot: boolean }, void>();
  const reported: unknown[] = [];
  let wanted = 0;
  let inFlight = 0;
  let maxInFlight = 0;
  const base = passes.logic();
  const machine = reconcileLoopMachine.provide({
    actors: { pass: base },
    // A failure no pass can outlive (in the Reconciler: the store was closed).
    guards: { halts: (_, params) => params.error instanceof FinalError },
    actions: {
      report: (_, params) => void reported.push(params.error),
      wanted: () => {
        wanted += 1;
      },
    },
  });
  const actor = createActor(machine, { clock, inspect, input: { periodMs: PERIOD } });
  const crashes: unknown[] = [];
  let ticks = 0;
  actor.subscribe({ error: (e) => crashes.push(e) });
  actor.start();
  /** Passes started and not answered yet. */
  const pending = () => passes.all.filter((c) => !c.answered);
  const track = () => {
    inFlight = pending().length;
    maxInFlight = Math.max(maxInFlight, inFlight);
  };
  return {
    actor,
    clock,
    passes,
    reported,
    crashes,
    pending,
    track,
    maxInFlight: () => maxInFlight,
    /** Times the `wanted` action ran (a tick came during a pass). */
    wanted: () => wanted,
    /** Answers the running pass (there must be exactly one). */
    async finish(error?: Error) {
      await settle();
      const [call, ...more] = pending();
      expect(more).toEqual([]);
      if (call === undefined) throw new Error('no pass is running');
      if (error) call.reject(error);
      else call.resolve();
      await settle();
      track();
    },
    /** A tick with an id, returning its answer (the `passed` event naming it) once emitted. */
    tick() {
      const id = `t${++ticks}`;
      let answer: { error: unknown } | undefined;
      actor.on('roundtable.reconciler.passed', (passed) => {
        if (!passed.ticks.includes(id)) return;
        if (answer !== undefined) throw new Error('answered twice');
        answer = { error: passed.error };
      });
      actor.send({ type: 'roundtable.reconciler.tick', id });
      return { answer: () => answer };
    },
  };
}

describe('reconcile loop', () => {
  it('runs a boot pass at once, then one every period on the clock, not before', async () => {
    const l = startLoop();
    await settle();
    expect(l.passes.all.map((c) => c.input)).toEqual([{ boot: true }]);
    await l.finish();
    expect(l.actor.getSnapshot().value).toBe('idle');
    l.clock.increment(PERIOD - 1);
    await settle();
    expect(l.passes.count).toBe(1);
    l.clock.increment(1);
    await settle();
    expect(l.passes.all.map((c) => c.input.boot)).toEqual([true, false]);
    // The period counts from the end of the pass, not its start: a slow pass delays the next.
    l.clock.increment(5_000);
    await l.finish();
    l.clock.increment(PERIOD - 1);
    await settle();
    expect(l.passes.count).toBe(2);
    l.clock.increment(1);
    await settle();
    expect(l.passes.count).toBe(3);
  });

  it('a tick while idle runs a pass now, and its caller hears once the pass is over', async () => {
    const l = startLoop();
    await l.finish();
    const t = l.tick();
    await settle();
    expect(l.passes.count).toBe(2);
    expect(t.answer()).toBeUndefined();
    await l.finish();
    expect(t.answer()).toEqual({ error: undefined });
    // The tick restarted the period: the next timed pass is a full period after it.
    l.clock.increment(PERIOD - 1);
    await settle();
    expect(l.passes.count).toBe(2);
  });

  it('ticks during a pass never overlap it: they are all covered by one more pass after it', async () => {
    const l = startLoop();
    await settle();
    const ticks = [l.tick(), l.tick(), l.tick()];
    l.actor.send({ type: 'roundtable.reconciler.tick' }); // a tick with no caller still asks for a pass
    await settle();
    expect(l.pending()).toHaveLength(1);
    await l.finish();
    // The boot pass was under way when they came: it does not cover them.
    expect(ticks.map((t) => t.answer())).toEqual([undefined, undefined, undefined]);
    expect(l.pending()).toHaveLength(1);
    expect(l.passes.all.at(-1)?.input).toEqual({ boot: false });
    await l.finish();
    expect(ticks.map((t) => t.answer())).toEqual(Array(3).fill({ error: undefined }));
    expect(l.passes.count).toBe(2);
    expect(l.actor.getSnapshot().value).toBe('idle');
  });

  it('a tick during a pass, and only then, runs the wanted action (the pass may cut a prune short)', async () => {
    const l = startLoop();
    await settle();
    l.tick();
    l.actor.send({ type: 'roundtable.reconciler.tick' });
    expect(l.wanted()).toBe(2);
    await l.finish();
    // The pass the ticks asked for runs now; idle after it, a tick wants nothing of a pass.
    await l.finish();
    l.tick();
    expect(l.wanted()).toBe(2);
    await settle();
    await l.finish();
  });

  it('a tick with no caller during a pass still asks for one more pass', async () => {
    const l = startLoop();
    await settle();
    l.actor.send({ type: 'roundtable.reconciler.tick' });
    await l.finish();
    expect(l.pending()).toHaveLength(1);
  });

  it('a failed pass is reported, its callers get the error, and the loop goes on', async () => {
    const l = startLoop();
    await l.finish();
    const t = l.tick();
    const failure = new Error('database unreachable');
    await l.finish(failure);
    expect(l.reported).toEqual([failure]);
    expect(t.answer()).toEqual({ error: failure });
    expect(l.actor.getSnapshot().status).toBe('active');
    expect(l.actor.getSnapshot().value).toBe('idle');
    l.clock.increment(PERIOD);
    await l.finish();
    expect(l.passes.count).toBe(3);
    expect(l.reported).toEqual([failure]);
    expect(l.crashes).toEqual([]);
  });

  it('a failed boot pass is retried as a boot pass (step 1 must still run)', async () => {
    const l = startLoop();
    await l.finish(new Error('boot pass failed'));
    l.clock.increment(PERIOD);
    await settle();
    expect(l.passes.all.map((c) => c.input.boot)).toEqual([true, true]);
    await l.finish();
    l.tick();
    await settle();
    expect(l.passes.all.map((c) => c.input.boot)).toEqual([true, true, false]);
  });

  it('a tick during a failed pass is served by the next pass, not by the failure', async () => {
    const l = startLoop();
    await settle();
    const t = l.tick();
    await l.finish(new Error('first'));
    expect(t.answer()).toBeUndefined();
    await l.finish();
    expect(t.answer()).toEqual({ error: undefined });
  });
});

describe('halting the loop', () => {
  it('a failure the halts guard names final is reported once, answers every caller, and no pass runs again; later ticks are answered at once', async () => {
    const l = startLoop();
    await l.finish();
    const during = l.tick();
    await settle();
    const waiting = l.tick(); // comes during the pass: it waits for the next one
    const final = new FinalError('closed');
    await l.finish(final);
    expect(l.reported).toEqual([final]);
    expect([during.answer(), waiting.answer()]).toEqual([{ error: final }, { error: final }]);
    expect(l.actor.getSnapshot().value).toBe('halted');
    expect(l.actor.getSnapshot().status).toBe('active');
    l.clock.increment(PERIOD * 10);
    await settle();
    expect(l.passes.count).toBe(2);
    const later = l.tick();
    await settle();
    expect(later.answer()?.error).toMatchObject({ code: 'RECONCILER_STOPPED' });
    expect(l.passes.count).toBe(2);
    expect(l.reported).toEqual([final]);
    expect(l.crashes).toEqual([]);
  });
});

describe('stopping the loop', () => {
  it('its snapshot is plain data: tick ids, no callbacks, through JSON and back unchanged', async () => {
    const l = startLoop();
    await settle();
    const covered = l.tick(); // during the boot pass: covered by the next pass
    await l.finish();
    l.tick(); // during that next pass, which hangs: waits for one more
    l.actor.send({ type: 'roundtable.reconciler.tick' });
    await settle();
    const snapshot = l.actor.getPersistedSnapshot() as unknown as { context: unknown };
    expect(snapshot.context).toEqual({
      periodMs: PERIOD,
      boot: false,
      waiting: ['t2'],
      covered: ['t1'],
      again: true,
    });
    expect(JSON.parse(JSON.stringify(snapshot))).toEqual(snapshot);
    expect(covered.answer()).toBeUndefined();
    l.actor.stop();
  });

  it('a stopped loop answers nobody (the caller watches the actor) and aborts its pass', async () => {
    const l = startLoop();
    await settle();
    const covered = l.tick();
    await l.finish();
    const pass = l.pending()[0];
    expect(pass?.signal?.aborted).toBe(false);
    l.actor.stop();
    expect(covered.answer()).toBeUndefined();
    expect(pass?.signal?.aborted).toBe(true);
    expect(l.crashes).toEqual([]);
  });

  it('every pass says it is over, also one no tick asked for (ticks: [])', async () => {
    const l = startLoop();
    const seen: unknown[] = [];
    l.actor.on('roundtable.reconciler.passed', (e) => void seen.push(e));
    await l.finish();
    expect(seen).toEqual([{ type: 'roundtable.reconciler.passed', ticks: [] }]);
    l.actor.stop();
  });
});

type Op =
  | { kind: 'tick' }
  | { kind: 'silentTick' }
  | { kind: 'finish'; fail: boolean }
  | { kind: 'advance'; ms: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.constant<Op>({ kind: 'tick' }),
  fc.constant<Op>({ kind: 'silentTick' }),
  fc.boolean().map((fail): Op => ({ kind: 'finish', fail })),
  fc.integer({ min: 1, max: 2 * PERIOD }).map((ms): Op => ({ kind: 'advance', ms })),
);

describe('reconcile loop, random schedules', () => {
  test.prop([fc.array(opArb, { maxLength: 40 })], { numRuns: 150 })(
    'never two passes at once; each tick answered once, by the first pass started after it; boot until a pass succeeds',
    async (ops) => {
      const l = startLoop();
      await settle();
      l.track();
      // For each tick: how many passes had started when it was sent.
      const ticks: Array<{ startedBefore: number; answer: () => { error: unknown } | undefined }> =
        [];
      const results: Array<Error | undefined> = [];
      const finishOne = async (fail: boolean) => {
        const error = fail ? new Error(`pass ${results.length + 1} failed`) : undefined;
        results.push(error);
        await l.finish(error);
      };
      for (const op of ops) {
        l.track();
        if (op.kind === 'tick') ticks.push({ startedBefore: l.passes.count, ...l.tick() });
        else if (op.kind === 'silentTick') l.actor.send({ type: 'roundtable.reconciler.tick' });
        else if (op.kind === 'advance') l.clock.increment(op.ms);
        else if (l.pending().length > 0) await finishOne(op.fail);
        await settle();
        l.track();
      }
      // Drain: answer passes until the loop rests; every wait must end.
      for (let i = 0; l.pending().length > 0; i++) {
        if (i > ops.length + 2) throw new Error('the loop does not come to rest');
        await finishOne(false);
      }
      expect(l.maxInFlight()).toBe(1);
      expect(l.actor.getSnapshot().value).toBe('idle');
      for (const t of ticks) {
        // Pass n (0-based) is the first started after the tick: index startedBefore.
        expect(t.answer()).toEqual({ error: results[t.startedBefore] });
      }
      const firstOk = results.indexOf(undefined);
      l.passes.all.forEach((c, i) => {
        expect(c.input.boot).toBe(firstOk === -1 || i <= firstOk);
      });
      expect(l.reported).toEqual(results.filter((r) => r !== undefined));
      expect(l.crashes).toEqual([]);
      l.actor.stop();
    },
  );
});

describe('transition coverage', () => {
  it('the check can fail: a loop that only runs its boot pass leaves transitions untaken', async () => {
    const partial = new MachineCoverage('reconciler');
    const l = startLoop(partial.inspect);
    await l.finish();
    expect(partial.missingTransitions(reconcileLoopMachine)).toContain(
      "reconciler.reconciling on 'roundtable.reconciler.tick' #0",
    );
    l.actor.stop();
  });

  it('every state and every declared transition was taken by the tests above', () => {
    expect(declaredTransitions(reconcileLoopMachine).length).toBe(9);
    expect(coverage.missingTransitions(reconcileLoopMachine)).toEqual([]);
    expect(coverage.missingStates(reconcileLoopMachine)).toEqual([]);
  });
});
