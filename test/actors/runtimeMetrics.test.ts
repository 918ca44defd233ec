import { expect, test } from 'vitest';
import * as metrics from '../../src/actors/runtimeMetrics.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/actors/runtimeMetrics.ts', import.meta.url), metrics);

test('per-user counts from the pool; totals only grow, and a snapshot is a copy', () => {
  const m = new metrics.RuntimeMetrics();
  m.restarted();
  m.gaveUp('timeout');
  m.gaveUp('timeout');
  m.gaveUp('runner_lost');
  const pool = {
    maxRunning: 4,
    running: 1,
    queued: 2,
    users: [
      { userId: 'alice', running: 1, queued: 0, maxRunning: null },
      { userId: 'bob', running: 0, queued: 2, maxRunning: 1 },
    ],
  };
  const first = m.snapshot(pool);
  expect(first).toEqual({
    queueDepth: [
      { userId: 'alice', queued: 0 },
      { userId: 'bob', queued: 2 },
    ],
    running: [
      { userId: 'alice', running: 1 },
      { userId: 'bob', running: 0 },
    ],
    waitSamplesSeconds: [],
    restartsTotal: 1,
    giveUpsTotal: { timeout: 2, runner_lost: 1 },
  });
  m.gaveUp('timeout');
  m.restarted();
  expect(first.giveUpsTotal).toEqual({ timeout: 2, runner_lost: 1 });
  expect(m.snapshot(pool)).toMatchObject({ restartsTotal: 2, giveUpsTotal: { timeout: 3 } });
});
