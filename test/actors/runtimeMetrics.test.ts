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
    tickSamples: [],
    ticksTotal: { ok: 0, failed: 0 },
    grantsTotal: 0,
    ownerDownsTotal: {},
    submissionsTotal: {},
    samplesDroppedTotal: { wait: 0, tick: 0 },
  });
  m.gaveUp('timeout');
  m.restarted();
  expect(first.giveUpsTotal).toEqual({ timeout: 2, runner_lost: 1 });
  expect(m.snapshot(pool)).toMatchObject({ restartsTotal: 2, giveUpsTotal: { timeout: 3 } });
});

test('a node nobody scrapes keeps at most MAX_PENDING_SAMPLES of each series, and counts the rest dropped', () => {
  const m = new metrics.RuntimeMetrics();
  const pool = { maxRunning: 1, running: 0, queued: 0, users: [] };
  const n = metrics.MAX_PENDING_SAMPLES + 7;
  for (let i = 0; i < n; i += 1) {
    m.granted(new Date(0), i);
    m.ticked({ ms: i, ops: 1, ok: i % 2 === 0 });
    m.ownerDown(i % 3 === 0 ? 'beat_stale' : 'lock_released');
  }
  const s = m.snapshot(pool);
  expect(s.waitSamplesSeconds).toHaveLength(metrics.MAX_PENDING_SAMPLES);
  // The newest are kept: the last sample is the last wait.
  expect(s.waitSamplesSeconds.at(-1)).toBe((n - 1) / 1000);
  expect(s.waitSamplesSeconds[0]).toBe(7 / 1000);
  expect(s.tickSamples).toHaveLength(metrics.MAX_PENDING_SAMPLES);
  expect(s.samplesDroppedTotal).toEqual({ wait: 7, tick: 7 });
  // Totals count every event, dropped samples or not.
  expect(s.grantsTotal).toBe(n);
  expect(s.ticksTotal.ok + s.ticksTotal.failed).toBe(n);
  expect(s.ownerDownsTotal.beat_stale).toBe(Math.ceil(n / 3));
  // Taken once; the next scrape starts empty and the drops stay counted.
  const next = m.snapshot(pool);
  expect([next.waitSamplesSeconds, next.tickSamples]).toEqual([[], []]);
  expect(next.samplesDroppedTotal).toEqual({ wait: 7, tick: 7 });
});

test('PendingSamples keeps its order across compactions', () => {
  const p = new metrics.PendingSamples<number>(3);
  for (let i = 0; i < 20; i += 1) p.push(i);
  expect(p.take()).toEqual([17, 18, 19]);
  expect(p.dropped).toBe(17);
  p.push(20);
  expect(p.take()).toEqual([20]);
});
