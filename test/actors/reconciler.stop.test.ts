/**
 * `requestPass` always settles: a pass that hangs (step 1's `repin` never
 * answers) and an actor that stops, crashes or was already gone reject with
 * ReconcilerStoppedError instead of leaving the caller waiting for ever.
 * No database: the hanging step comes before the first query.
 */
import { describe, expect, it } from 'vitest';
import { type AnyActorRef, createActor, SimulatedClock } from 'xstate';
import {
  type ReconcilerOptions,
  ReconcilerStoppedError,
  reconcilerLogic,
  requestPass,
} from '../../src/actors/reconciler.js';
import type { ContainerBackend } from '../../src/containers/ContainerBackend.js';
import { startSupervisor } from '../../src/supervisor/index.js';
import { fakeDb } from './fakeDb.js';

/** Reconciler options whose boot pass hangs in step 1 until `release` (or for ever). */
function hangingReconciler(overrides: Partial<ReconcilerOptions> = {}) {
  const clock = new SimulatedClock();
  let repins = 0;
  let release: (error: Error) => void = () => {};
  const backend = {
    repin: () => {
      repins += 1;
      return new Promise<never>((_, reject) => {
        release = reject;
      });
    },
  } as unknown as ContainerBackend;
  const none = async () => {
    throw new Error('not reached: the pass hangs before');
  };
  const options: ReconcilerOptions = {
    db: fakeDb(none).db,
    backend,
    submit: none,
    repair: none,
    poke: () => {},
    owner: 'n1',
    now: () => clock.now(),
    liveness: { isAlive: async () => true },
    runnerImage: 'runner:v2',
    liveRunners: () => new Set(),
    runAdopted: none,
    stopRunner: () => {},
    onError: () => {},
    onGiveUp: () => {},
    lock: false,
    clock,
    // Far away: these tests stop the actor long before any deadline.
    passTimeoutMs: 3_600_000,
    track: (work) => work,
    ...overrides,
  };
  return {
    clock,
    logic: reconcilerLogic(options),
    repins: () => repins,
    fail: (error: Error) => release(error),
  };
}

const settle = async () => {
  for (let i = 0; i < 10; i += 1) await Promise.resolve();
};

describe('requestPass', () => {
  it('the actor is stopped during a hanging pass: the promise rejects', async () => {
    const r = hangingReconciler();
    const actor = createActor(r.logic, { clock: r.clock, input: { periodMs: 60_000 } });
    actor.start();
    await settle();
    expect(r.repins()).toBe(1);
    const pass = requestPass(actor);
    const seen = pass.catch((e: unknown) => e);
    await settle();
    actor.stop();
    const error = await seen;
    expect(error).toBeInstanceOf(ReconcilerStoppedError);
    expect(error).toMatchObject({ code: 'RECONCILER_STOPPED' });
  });

  it('its supervisor shuts down during the pass (runtime.stop()): the promise rejects', async () => {
    const r = hangingReconciler();
    const sup = await startSupervisor(
      {
        children: [{ id: 'reconciler', start: { logic: r.logic, input: { periodMs: 60_000 } } }],
      },
      { clock: r.clock },
    );
    await settle();
    const pass = requestPass(sup.child('reconciler') as AnyActorRef).catch((e: unknown) => e);
    await sup.shutdown();
    expect(await pass).toMatchObject({ code: 'RECONCILER_STOPPED' });
  });

  it('the actor crashes during the pass: the promise rejects, the crash as its cause', async () => {
    const crash = new Error('reporter down');
    const r = hangingReconciler({
      onError: () => {
        throw crash; // `report` runs this: the loop machine errors
      },
    });
    const actor = createActor(r.logic, { clock: r.clock, input: { periodMs: 60_000 } });
    actor.subscribe({ error: () => {} });
    actor.start();
    await settle();
    const pass = requestPass(actor).catch((e: unknown) => e);
    r.fail(new Error('store down'));
    const error = await pass;
    expect(actor.getSnapshot().status).toBe('error');
    expect(error).toBeInstanceOf(ReconcilerStoppedError);
    expect((error as Error).cause).toBe(crash);
  });

  it('the actor is already stopped: rejects at once, the tick is not lost silently', async () => {
    const r = hangingReconciler();
    const actor = createActor(r.logic, { clock: r.clock, input: { periodMs: 60_000 } });
    actor.start();
    actor.stop();
    await expect(requestPass(actor)).rejects.toMatchObject({
      code: 'RECONCILER_STOPPED',
      message: 'the reconciler is not running',
    });
  });

  it('a pass that finishes answers as before: resolved, or rejected with its error', async () => {
    const r = hangingReconciler();
    const actor = createActor(r.logic, { clock: r.clock, input: { periodMs: 60_000 } });
    actor.start();
    await settle();
    const failed = requestPass(actor).catch((e: unknown) => e);
    r.fail(new Error('repin failed'));
    // The boot pass failed; the tick's pass is a boot pass again and hangs in its turn.
    await settle();
    expect(r.repins()).toBe(2);
    r.fail(new Error('repin failed again'));
    expect(await failed).toMatchObject({ message: 'repin failed again' });
    actor.stop();
  });
});
