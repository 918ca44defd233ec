import { describe, expect, it, vi } from 'vitest';
import type { Runtime, RuntimeCard } from '../../src/actors/runtimeTypes.js';
import { type DemoStep, demoPlan } from '../../src/cli/demoPlan.js';
import { type DemoTimers, runDemoWorkload } from '../../src/cli/runDemoWorkload.js';
import type { SimulatedCluster } from '../../src/containers/simulated/SimulatedCluster.js';

/** Timers fired by hand, in time order. */
function manualTimers() {
  let now = 0;
  const pending = new Map<number, { at: number; fn: () => void }>();
  let next = 1;
  const timers: DemoTimers = {
    setTimeout: (fn, ms) => {
      pending.set(next, { at: now + ms, fn });
      return next++;
    },
    clearTimeout: (h) => void pending.delete(h as number),
  };
  return {
    timers,
    pending: () => pending.size,
    async advance(ms: number) {
      const until = now + ms;
      for (;;) {
        const due = [...pending.entries()]
          .filter(([, t]) => t.at <= until)
          .sort((a, b) => a[1].at - b[1].at)[0];
        if (due === undefined) break;
        pending.delete(due[0]);
        now = due[1].at;
        due[1].fn();
        await new Promise((r) => setImmediate(r));
      }
      now = until;
    },
  };
}

const card = (over: Partial<RuntimeCard>): RuntimeCard => ({
  taskId: 't',
  userId: 'ann',
  title: 'x',
  column: 'queued',
  sessionId: 's',
  attempt: 1,
  status: 'queued',
  queued: null,
  running: null,
  failure: null,
  exitCode: null,
  lastOutput: [],
  updatedAt: new Date(0).toISOString(),
  ...over,
});

function fakeRuntime(cards: RuntimeCard[]) {
  const runtime = {
    cards: vi.fn(() => cards),
    createTask: vi.fn(async () => ({ taskId: 't', sessionId: 's', position: 1 })),
    setUserCap: vi.fn(async () => {}),
    cancel: vi.fn(async () => {}),
    retry: vi.fn(async () => ({ sessionId: 's2', position: 1 })),
  };
  return { runtime, asRuntime: runtime as unknown as Runtime };
}
const logger = () => ({ info: vi.fn(), warn: vi.fn() });

describe('runDemoWorkload', () => {
  it('plays every step of the plan at its time', async () => {
    const cards = [
      card({ taskId: 'q1', column: 'queued', queued: { position: 1, since: '' } }),
      card({ taskId: 'q2', column: 'queued', queued: { position: 2, since: '' } }),
      card({ taskId: 'r', column: 'running', status: 'running', sessionId: 'ses_r' }),
      card({ taskId: 'f', column: 'failed', status: 'failed' }),
    ];
    const { runtime, asRuntime } = fakeRuntime(cards);
    const cluster = { reschedule: vi.fn() };
    const t = manualTimers();
    const plan = demoPlan({ users: ['ann', 'bo'], tasksPerUser: 2 });
    runDemoWorkload(asRuntime, cluster as unknown as SimulatedCluster, plan, logger(), t.timers);
    await t.advance(1_000);
    expect(runtime.createTask).toHaveBeenCalledTimes(3); // at 0, 400 and 800 ms
    await t.advance(60_000);
    expect(runtime.createTask).toHaveBeenCalledTimes(4);
    expect(runtime.setUserCap).toHaveBeenCalledWith('ann', 3);
    expect(runtime.cancel).toHaveBeenCalledWith(null, 'q2');
    expect(cluster.reschedule).toHaveBeenCalledWith('ses_r');
    expect(runtime.retry).toHaveBeenCalledWith(null, 'f');
    expect(t.pending()).toBe(0);
  });

  it('tries a step again while there is nothing to act on, then gives up with a warning', async () => {
    const cards: RuntimeCard[] = [];
    const { asRuntime } = fakeRuntime(cards);
    const cluster = { reschedule: vi.fn() };
    const log = logger();
    const t = manualTimers();
    const steps: DemoStep[] = [{ atMs: 0, kind: 'reschedule' }];
    runDemoWorkload(asRuntime, cluster as unknown as SimulatedCluster, steps, log, t.timers);
    await t.advance(3_500);
    expect(cluster.reschedule).not.toHaveBeenCalled();
    cards.push(card({ column: 'running', status: 'running', sessionId: 'late' }));
    await t.advance(1_000);
    expect(cluster.reschedule).toHaveBeenCalledWith('late');

    cards.length = 0;
    runDemoWorkload(asRuntime, null, [{ atMs: 0, kind: 'retryFailed' }], log, t.timers);
    await t.advance(20_000);
    expect(log.warn).toHaveBeenCalledWith(
      { step: 'retryFailed' },
      'demo: nothing to retryFailed, skipped',
    );
  });

  it('logs a failed step and goes on with the others', async () => {
    const { runtime, asRuntime } = fakeRuntime([]);
    runtime.setUserCap.mockRejectedValueOnce(new Error('store down'));
    const log = logger();
    const t = manualTimers();
    runDemoWorkload(
      asRuntime,
      null,
      [
        { atMs: 0, kind: 'setCap', user: 'ann', maxRunning: 1 },
        { atMs: 10, kind: 'submit', user: 'ann', title: 'x', command: ['echo'] },
      ],
      log,
      t.timers,
    );
    await t.advance(100);
    expect(log.warn).toHaveBeenCalledOnce();
    expect(runtime.createTask).toHaveBeenCalledOnce();
  });

  it('stop cancels the steps not yet run', async () => {
    const { runtime, asRuntime } = fakeRuntime([]);
    const t = manualTimers();
    const stop = runDemoWorkload(
      asRuntime,
      null,
      demoPlan({ users: ['ann'], tasksPerUser: 3 }),
      logger(),
      t.timers,
    );
    await t.advance(500);
    stop();
    expect(t.pending()).toBe(0);
    await t.advance(60_000);
    expect(runtime.createTask).toHaveBeenCalledTimes(2);
  });
});
