import { fc, test } from '@fast-check/vitest';
import { describe, expect } from 'vitest';
import * as mod from '../../src/client/estimateStart.js';
import { estimateStarts, type StartEstimateInput } from '../../src/client/estimateStart.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/client/estimateStart.ts', import.meta.url), mod);

const users = fc.constantFrom('ann', 'bob', 'cy');
const input = fc
  .record({
    maxRunning: fc.integer({ min: 1, max: 6 }),
    running: fc.array(fc.record({ userId: users, since: fc.integer({ min: -600_000, max: 0 }) }), {
      maxLength: 6,
    }),
    runningUnseen: fc.integer({ min: 0, max: 3 }),
    positions: fc.uniqueArray(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 20 }),
    owners: fc.array(users, { minLength: 20, maxLength: 20 }),
    recentDurations: fc.array(fc.integer({ min: 1_000, max: 900_000 }), {
      minLength: 1,
      maxLength: 30,
    }),
    userCaps: fc.dictionary(users, fc.option(fc.integer({ min: 1, max: 3 }))),
  })
  .map(
    (r): StartEstimateInput => ({
      now: 0,
      maxRunning: r.maxRunning,
      userCaps: r.userCaps,
      running: r.running,
      runningUnseen: r.runningUnseen,
      queued: r.positions.map((position, i) => ({
        taskId: `t${position}`,
        userId: r.owners[i]!,
        position,
      })),
      recentDurations: r.recentDurations,
    }),
  );

describe('estimateStarts', () => {
  test.prop([input], { numRuns: 300 })(
    'gives every queued card a time, never negative, and later places no sooner (no user caps)',
    (i) => {
      const est = estimateStarts({ ...i, userCaps: {} });
      expect(Object.keys(est).sort()).toEqual(i.queued.map((q) => q.taskId).sort());
      const byPosition = [...i.queued].sort((a, b) => a.position - b.position);
      let previous = 0;
      for (const q of byPosition) {
        expect(est[q.taskId]).toBeGreaterThanOrEqual(previous);
        previous = est[q.taskId]!;
      }
    },
  );

  test.prop(
    [
      input,
      fc.array(fc.option(fc.integer({ min: -60_000, max: 900_000 })), {
        minLength: 26,
        maxLength: 26,
      }),
    ],
    {
      numRuns: 300,
    },
  )('a time limit, on a run going or one waiting, never makes anyone start later', (i, limits) => {
    const base = estimateStarts(i);
    const limited = estimateStarts({
      ...i,
      running: i.running.map((r, n) => ({ ...r, until: limits[n] ?? null })),
      queued: i.queued.map((q, n) => {
        const ms = limits[6 + n];
        return { ...q, limitMs: ms == null ? null : Math.max(1_000, ms) };
      }),
    });
    for (const q of i.queued) expect(limited[q.taskId]).toBeLessThanOrEqual(base[q.taskId]! + 1e-6);
  });

  test.prop([input], { numRuns: 300 })('another runner never makes anyone start later', (i) => {
    const base = estimateStarts({ ...i, userCaps: {} });
    const more = estimateStarts({ ...i, userCaps: {}, maxRunning: i.maxRunning + 1 });
    for (const q of i.queued) expect(more[q.taskId]).toBeLessThanOrEqual(base[q.taskId]!);
  });

  test.prop([input], { numRuns: 300 })(
    'a cap only ever delays, and times scale with durations',
    (i) => {
      const free = estimateStarts({ ...i, userCaps: {} });
      const capped = estimateStarts(i);
      for (const q of i.queued)
        expect(capped[q.taskId]).toBeGreaterThanOrEqual(free[q.taskId]! - 1e-6);
      const doubled = estimateStarts({
        ...i,
        running: i.running.map((r) => ({ ...r, since: r.since * 2 })),
        recentDurations: i.recentDurations.map((d) => d * 2),
      });
      for (const q of i.queued) expect(doubled[q.taskId]).toBeCloseTo(capped[q.taskId]! * 2, 3);
    },
  );

  test.prop([input], { numRuns: 300 })(
    'a user capped at 0 gets no estimate, and every other card a finite one',
    (i) => {
      const [first] = i.queued;
      if (first === undefined) return;
      const zero = first.userId;
      const est = estimateStarts({ ...i, userCaps: { ...i.userCaps, [zero]: 0 } });
      if (i.recentDurations.length === 0) return;
      for (const q of i.queued) {
        if (q.userId === zero) expect(est[q.taskId]).toBeUndefined();
        else expect(Number.isFinite(est[q.taskId])).toBe(true);
      }
    },
  );
});
