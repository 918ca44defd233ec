/**
 * Every wait in a Reconciler pass has a deadline: the backends' per-call
 * deadlines (the simulated one honours `hangApi` with its own), and the
 * pass deadline on top, which abandons a pass whose call never answers, so
 * a hung pass cannot hold the advisory lock (or the loop) for ever.
 */
import { afterEach, describe, expect, it, test } from 'vitest';
import { ReconcilerPassTimeoutError, withPassDeadline } from '../../src/actors/reconciler.js';
import { createRuntime } from '../../src/actors/runtime.js';
import type { Runtime } from '../../src/actors/runtimeTypes.js';
import { SimulatedBackend } from '../../src/containers/simulated/SimulatedBackend.js';
import { SimulatedCluster } from '../../src/containers/simulated/SimulatedCluster.js';
import { TestClock } from '../../src/testing/TestClock.js';
import { describeEachEngine } from '../support/databases.js';
import { killAll } from '../support/multiNode.js';

/** Waits for real I/O until `done()`; a deadline, not a sleep. */
async function until(done: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise<void>((r) => setImmediate(r));
  }
}

/**
 * Moves the clock by `ms`, firing every timer due by then in order (the
 * runtime has timers of its own: the feed's poll, the board watch's linger),
 * with the loop turned between firings.
 */
async function fireDue(clock: TestClock, ms: number): Promise<void> {
  const target = clock.now() + ms;
  for (let due = clock.nextDue(target); due !== null; due = clock.nextDue(target)) {
    clock.fireNext(due);
    for (let i = 0; i < 5; i += 1) await new Promise<void>((r) => setImmediate(r));
  }
  clock.fireNext(target);
}

/** Tracks whether a promise has settled, without awaiting it. */
function watch<T>(p: Promise<T>) {
  const state = { settled: false, error: undefined as unknown };
  p.then(
    () => {
      state.settled = true;
    },
    (e: unknown) => {
      state.settled = true;
      state.error = e;
    },
  );
  return state;
}

describe('withPassDeadline', () => {
  it('a pass that never answers is abandoned at the deadline: rejected, and its signal aborted', async () => {
    const clock = new TestClock();
    let signal: AbortSignal | undefined;
    const p = withPassDeadline(
      (s) => {
        signal = s;
        return new Promise<never>(() => {});
      },
      { clock, ms: 1_000 },
    );
    const state = watch(p);
    clock.fireNext(clock.now() + 999);
    await Promise.resolve();
    expect(state.settled).toBe(false);
    clock.fireNext(clock.now() + 1);
    await expect(p).rejects.toBeInstanceOf(ReconcilerPassTimeoutError);
    expect(signal?.aborted).toBe(true);
    expect(signal?.reason).toMatchObject({ code: 'RECONCILER_PASS_TIMEOUT' });
  });

  it('a pass that ends in time keeps its outcome and leaves no timer behind', async () => {
    const clock = new TestClock();
    await expect(withPassDeadline(async () => 'done', { clock, ms: 1_000 })).resolves.toBe('done');
    const boom = new Error('boom');
    await expect(
      withPassDeadline(
        async () => {
          throw boom;
        },
        { clock, ms: 1_000 },
      ),
    ).rejects.toBe(boom);
    expect(clock.pending()).toBe(0);
  });
});

describeEachEngine('Reconciler pass deadlines on a runtime', (getDb) => {
  let rt: Runtime | undefined;
  afterEach(async () => {
    if (rt) await killAll([rt]);
    rt = undefined;
  });

  const boot = async (backend: SimulatedBackend, clock: TestClock) => {
    const errors: unknown[] = [];
    rt = await createRuntime({
      db: getDb().db,
      backend,
      clock,
      caps: { maxRunning: 2, defaultUserCap: 1 },
      nodeId: 'n1',
      bootId: 'b1',
      // Keep the clock quiet but for what the test drives.
      reconcileMs: 3_600_000,
      heartbeatMs: 3_600_000,
      passTimeoutMs: 60_000,
      onError: (e) => errors.push(e),
    });
    const node = rt;
    let quiet = 0;
    await until(() => {
      quiet = node.busy() === 0 ? quiet + 1 : 0;
      return quiet >= 3;
    }, 'the boot pass');
    return { rt: node, errors };
  };

  test('hangApi: the simulated backend answers each call with a timeout at its own deadline, long before the pass deadline', async () => {
    const clock = new TestClock();
    const cluster = new SimulatedCluster({ clock });
    const backend = new SimulatedBackend(cluster, { callTimeoutMs: 10_000 });
    let lists = 0;
    const list = backend.listHandles.bind(backend);
    backend.listHandles = () => {
      lists += 1;
      return list();
    };
    const node = (await boot(backend, clock)).rt;
    cluster.hangApi(3_600_000);
    const before = lists;
    const pass = node.reconcile();
    const state = watch(pass);
    await until(() => lists === before + 1, 'the sweep to call the API');
    await fireDue(clock, 9_999);
    for (let i = 0; i < 5; i += 1) await new Promise<void>((r) => setImmediate(r));
    expect(state.settled).toBe(false);
    await fireDue(clock, 1);
    await expect(pass).rejects.toMatchObject({ code: 'timeout' });
  });

  test('a call that never answers: the pass is abandoned at its deadline, and the next pass runs', async () => {
    const clock = new TestClock();
    const cluster = new SimulatedCluster({ clock });
    const backend = new SimulatedBackend(cluster);
    let hang = false;
    let lists = 0;
    const list = backend.listHandles.bind(backend);
    backend.listHandles = () => {
      lists += 1;
      return hang ? new Promise<never>(() => {}) : list();
    };
    const node = (await boot(backend, clock)).rt;
    hang = true;
    const before = lists;
    const pass = node.reconcile();
    const state = watch(pass);
    await until(() => lists === before + 1, 'the sweep to call the API');
    await fireDue(clock, 59_999);
    for (let i = 0; i < 5; i += 1) await new Promise<void>((r) => setImmediate(r));
    expect(state.settled).toBe(false);
    await fireDue(clock, 1);
    await expect(pass).rejects.toMatchObject({ code: 'RECONCILER_PASS_TIMEOUT' });
    hang = false;
    await expect(node.reconcile()).resolves.toBeUndefined();
    expect(lists).toBe(before + 2);
  });
});
