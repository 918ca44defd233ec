/**
 * `runtime.booted` (the first successful boot pass) and `runtime.exited`
 * (why the tree ended: stopped, killed, or the root giving up when its
 * children crash faster than its intensity allows).
 */
import { expect, test } from 'vitest';
import { describeRuntimeExit, RuntimeStoppedError } from '../../src/actors/runtimeTypes.js';
import type { TestRuntime } from '../../src/testing/index.js';
import { pgliteRuntimes } from '../support/pgliteRuntimes.js';

const runtimes = pgliteRuntimes();
let h: TestRuntime;

const agent = (seconds: number) => ({
  title: 't',
  image: 'runner:v1',
  command: ['agent', String(seconds)],
});

test('booted resolves with the boot pass report, with no extra pass', async () => {
  h = await runtimes.open({ caps: { maxRunning: 1, defaultUserCap: 1 } });
  await h.runtime.createTask('alice', agent(100));
  await h.runtime.createTask('alice', agent(100));
  await h.advance(10_000);
  // A new boot on these rows: its boot pass adopts the running one.
  const runtime = await h.deploy();
  const report = await runtime.booted;
  expect(report.adopted).toHaveLength(1);
  // The same promise for every caller, settled once.
  expect(await runtime.booted).toBe(report);
});

test('booted waits out a failed boot pass, and rejects with RuntimeStoppedError if the runtime stops first', async () => {
  let broken = false;
  h = await runtimes.open({
    liveness: {
      isAlive: async () => {
        if (broken) throw new Error('liveness store down');
        return false;
      },
    },
  });
  await h.runtime.createTask('alice', agent(100));
  await h.advance(10_000);
  broken = true;
  // The next boot's pass asks about the previous boot's running row, and fails.
  const runtime = await h.deploy();
  await h.settle();
  let settled = false;
  void runtime.booted.then(
    () => {
      settled = true;
    },
    () => {
      settled = true;
    },
  );
  await h.settle();
  expect(settled).toBe(false);
  expect(h.errors.length).toBeGreaterThan(0);
  await runtime.stop();
  const error = await runtime.booted.catch((e: unknown) => e);
  expect(error).toBeInstanceOf(RuntimeStoppedError);
  expect(error).toMatchObject({ code: 'RUNTIME_STOPPED', exit: { kind: 'stopped' } });
  expect(await runtime.exited).toEqual({ kind: 'stopped' });
});

test('a failed boot pass retried at the next period resolves booted then', async () => {
  let broken = false;
  h = await runtimes.open({
    reconcileMs: 10_000,
    liveness: {
      isAlive: async () => {
        if (broken) throw new Error('liveness store down');
        return false;
      },
    },
  });
  await h.runtime.createTask('alice', agent(100));
  await h.advance(5_000);
  broken = true;
  const runtime = await h.deploy();
  await h.settle();
  broken = false;
  await h.advance(10_000);
  expect((await runtime.booted).adopted).toHaveLength(1);
});

test('exited says killed after kill()', async () => {
  h = await runtimes.open();
  const runtime = h.runtime;
  await h.deploy();
  expect(await runtime.exited).toEqual({ kind: 'killed' });
});

test('a pool that crashes faster than the root allows: the root gives up and exited says so', async () => {
  h = await runtimes.open();
  await h.runtime.booted;
  await h.runtime.createTask('alice', agent(100));
  await h.settle();
  const runtime = h.runtime;
  let settled = false;
  void runtime.exited.then(() => {
    settled = true;
  });
  // Three restarts in 5 s are allowed (the root's intensity): still up.
  for (let i = 0; i < 3; i += 1) {
    await runtime.root.exitChild('runnerPool', 'kill');
    await h.settle();
  }
  expect(settled).toBe(false);
  expect(runtime.root.exitReason()).toBeUndefined();
  // The fourth within the period is one too many.
  await runtime.root.exitChild('runnerPool', 'kill');
  const exit = await runtime.exited;
  expect(exit).toEqual({
    kind: 'gave_up',
    reason: 'shutdown',
    lastCrash: { childId: 'runnerPool', reason: 'killed' },
    intensity: { restarts: 3, periodMs: 5_000 },
  });
  expect(describeRuntimeExit(exit)).toContain('gave up');
  // Nothing runs any more, and the commands say so.
  await expect(runtime.createTask('alice', agent(1))).rejects.toMatchObject({
    code: 'unavailable',
  });
  expect(runtime.liveRunners()).toEqual([]);
});

test('crashes spread wider than the period are each restarted: no exit', async () => {
  h = await runtimes.open();
  await h.runtime.booted;
  for (let i = 0; i < 6; i += 1) {
    await h.runtime.root.exitChild('runnerPool', 'kill');
    await h.advance(2_000);
  }
  expect(h.runtime.root.exitReason()).toBeUndefined();
  expect(h.errors).toEqual([]);
});
