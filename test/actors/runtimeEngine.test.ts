/**
 * The engine gate (src/actors/runtimeEngine.ts): a start that found the
 * engine unreachable closes it, and the probe reopens it. The probe calls
 * the backend from a timer, so a backend whose `ping` throws instead of
 * rejecting must still be reported and probed again, not escape the timer.
 */
import { expect, test } from 'vitest';
import { EngineGate } from '../../src/actors/runtimeEngine.js';
import type { ContainerBackend } from '../../src/containers/ContainerBackend.js';
import { ContainerError } from '../../src/containers/ContainerError.js';
import { ContainerRunError } from '../../src/machines/containerRunTypes.js';
import { TestClock } from '../../src/testing/TestClock.js';
import { queuedSession } from '../support/boardRuns.js';

const unreachable = () =>
  new ContainerRunError('START_FAILED', 'start failed', {
    cause: new ContainerError('unavailable', 'connect ENOENT /run/docker.sock'),
  });

/** Fires every timer due within `ms`, letting each probe's answer land before the next. */
async function advance(clock: TestClock, ms: number) {
  const target = clock.now() + ms;
  for (let due = clock.nextDue(target); due !== null; due = clock.nextDue(target)) {
    clock.fireNext(due);
    for (let i = 0; i < 5; i++) await Promise.resolve();
  }
  clock.fireNext(target);
}

for (const [how, ping] of [
  ['rejects', () => Promise.reject(new Error('engine down'))],
  [
    'throws',
    () => {
      throw new Error('engine down');
    },
  ],
] as const) {
  test(`a probe whose ping ${how} is reported and tried again; the gate opens when one answers`, async () => {
    const clock = new TestClock(0);
    const errors: unknown[] = [];
    let up = false;
    let pings = 0;
    let opened = 0;
    const backend = {
      ping: () => {
        pings += 1;
        return up ? Promise.resolve({ ok: true }) : ping();
      },
    } as unknown as ContainerBackend;
    const gate = new EngineGate({
      backend,
      clock,
      onChange: () => {
        opened += 1;
      },
      onError: (e) => errors.push(e),
      track: (p) => p,
      probe: { baseMs: 100, maxMs: 100 },
    });
    expect(gate.startFailed(unreachable(), queuedSession()).action).toBe('requeue');
    expect(gate.available()).toBe(false);
    // The first probe waits out the policy's retry delay (1 s after a first failure), then every 100 ms.
    await advance(clock, 1_250);
    expect(pings).toBe(3);
    expect(errors).toHaveLength(3);
    up = true;
    await advance(clock, 100);
    expect(gate.available()).toBe(true);
    expect(opened).toBe(1);
    gate.stop();
  });
}
