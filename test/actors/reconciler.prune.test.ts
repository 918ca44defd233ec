/**
 * The prune of a periodic pass gives way to a pass asked for meanwhile (an
 * owner's DOWN, `runtime.reconcile()`): the loop's `wanted` action, wired in
 * reconcilerLogic, stops it after the batch under way, and the pass asked
 * for runs at once and prunes on. No database: every query answers no rows,
 * and the prune is a fake whose batches the test answers one by one.
 */
import { describe, expect, it } from 'vitest';
import { createActor, SimulatedClock } from 'xstate';
import {
  type ReconcilerOptions,
  reconcilerLogic,
  requestPass,
} from '../../src/actors/reconciler.js';
import type { PassReport } from '../../src/actors/reconcilerSteps.js';
import type { ContainerBackend } from '../../src/containers/ContainerBackend.js';
import { fakeDb } from './fakeDb.js';

const PERIOD = 60_000;

/** Lets the pass's promise chains (kysely's included) run to their next wait. */
const settle = async () => {
  for (let i = 0; i < 5; i += 1) await new Promise<void>((r) => setImmediate(r));
};

function reconcilerWithPrune() {
  const clock = new SimulatedClock();
  const batches: ((n: number) => void)[] = [];
  const passes: { report: PassReport | null; boot: boolean }[] = [];
  const errors: unknown[] = [];
  const backend = { listHandles: async () => [] } as unknown as ContainerBackend;
  const options: ReconcilerOptions = {
    db: fakeDb(async () => ({ rows: [] })).db,
    backend,
    submit: async () => {
      throw new Error('not reached: no run to recover');
    },
    repair: async () => [],
    prune: () =>
      new Promise<number>((resolve) => {
        batches.push(resolve);
      }),
    poke: () => {},
    owner: 'n1',
    now: () => clock.now(),
    liveness: { isAlive: async () => true },
    liveRunners: () => new Set(),
    runAdopted: async () => {},
    stopRunner: () => {},
    onError: (e) => errors.push(e),
    onGiveUp: () => {},
    lock: false,
    clock,
    passTimeoutMs: 3_600_000,
    track: (work) => work,
    onPass: (report, pass) => passes.push({ report, boot: pass.boot }),
  };
  const actor = createActor(reconcilerLogic(options), { clock, input: { periodMs: PERIOD } });
  return {
    actor,
    clock,
    passes,
    errors,
    /** Prune calls so far. */
    asked: () => batches.length,
    /** Answers the latest prune call with `n` tasks. */
    async answer(n: number) {
      const last = batches.at(-1);
      if (last === undefined) throw new Error('no prune call yet');
      last(n);
      await settle();
    },
  };
}

describe('Reconciler: the prune and a pass asked for meanwhile', () => {
  it('stops after the batch under way; the pass asked for runs at once and prunes on', async () => {
    const r = reconcilerWithPrune();
    r.actor.start();
    await settle();
    // The boot pass never prunes.
    expect(r.passes).toEqual([{ report: expect.objectContaining({ pruned: 0 }), boot: true }]);
    expect(r.asked()).toBe(0);

    r.clock.increment(PERIOD);
    await settle();
    expect(r.asked()).toBe(1);
    // Full batches: the periodic pass asks for more while nothing else is wanted.
    await r.answer(100);
    await r.answer(100);
    expect(r.asked()).toBe(3);

    // A pass is asked for while the third batch is out: that batch is the last.
    const asked = requestPass(r.actor);
    await settle();
    await r.answer(100);
    expect(r.passes.at(-1)).toEqual({
      report: expect.objectContaining({ pruned: 300 }),
      boot: false,
    });
    // The pass asked for began at once (no period waited) and prunes on.
    expect(r.asked()).toBe(4);
    await r.answer(100);
    expect(r.asked()).toBe(5);
    await r.answer(40); // a short batch: nothing left
    await asked;
    expect(r.passes.at(-1)).toEqual({
      report: expect.objectContaining({ pruned: 140 }),
      boot: false,
    });
    expect(r.asked()).toBe(5);
    expect(r.errors).toEqual([]);
    r.actor.stop();
  });

  it('a tick while the loop idles is not carried into the next pass', async () => {
    const r = reconcilerWithPrune();
    r.actor.start();
    await settle();
    // A pass asked for between passes runs, prunes what there is, and ends.
    const asked = requestPass(r.actor);
    await settle();
    await r.answer(10);
    await asked;
    // The periodic pass after it is wanted by nobody: it goes on past three batches.
    r.clock.increment(PERIOD);
    await settle();
    for (let i = 0; i < 5; i += 1) await r.answer(100);
    expect(r.asked()).toBe(7);
    await r.answer(0);
    expect(r.passes.at(-1)).toEqual({
      report: expect.objectContaining({ pruned: 500 }),
      boot: false,
    });
    r.actor.stop();
  });
});
