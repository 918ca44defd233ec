import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import * as policy from '../../src/machines/startFailurePolicy.js';
import {
  START_FAILURE_DEFAULTS,
  startFailureAction,
  startRetryDelayMs,
} from '../../src/machines/startFailurePolicy.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/machines/startFailurePolicy.ts', import.meta.url), policy);

const limits = fc
  .record({
    maxAttempts: fc.integer({ min: 1, max: 20 }),
    baseDelayMs: fc.integer({ min: 0, max: 60_000 }),
    extraMs: fc.integer({ min: 0, max: 600_000 }),
  })
  .map(({ maxAttempts, baseDelayMs, extraMs }) => ({
    maxAttempts,
    baseDelayMs,
    maxDelayMs: baseDelayMs + extraMs,
  }));

const code = fc.constantFrom(
  'unavailable',
  'timeout',
  'rejected',
  'invalid_argument',
  'engine',
  'conflict',
  'not_found',
  'exec_lost',
  'aborted',
);

describe('startFailureAction', () => {
  test.prop([limits, fc.integer({ min: 1, max: 2000 })])(
    'delays never decrease from one attempt to the next and never exceed the cap',
    (l, attempt) => {
      const now = startRetryDelayMs(attempt, l);
      const next = startRetryDelayMs(attempt + 1, l);
      expect(now).toBeGreaterThanOrEqual(l.baseDelayMs);
      expect(next).toBeGreaterThanOrEqual(now);
      expect(next).toBeLessThanOrEqual(l.maxDelayMs);
      expect(Number.isFinite(next)).toBe(true);
    },
  );

  test.prop([limits, code, fc.integer({ min: 0, max: 50 }), fc.option(fc.string())])(
    'attempts at or beyond the limit always fail; below it only refusals do',
    (l, c, beyond, message) => {
      const attempt = l.maxAttempts + beyond;
      const last = startFailureAction({ ...l, code: c, attempt, message: message ?? undefined });
      expect(last.action).toBe('fail');
      if (l.maxAttempts === 1) return;
      const early = startFailureAction({ ...l, code: c, attempt: 1 });
      const refused = c === 'rejected' || c === 'invalid_argument';
      expect(early.action === 'fail').toBe(refused);
    },
  );

  test.prop([limits, fc.integer({ min: 1, max: 100 }), fc.string({ minLength: 1 })])(
    'rejected always fails at once, not recoverable, with the engine’s reason',
    (l, attempt, message) => {
      const action = startFailureAction({ ...l, code: 'rejected', message, attempt });
      expect(action).toMatchObject({
        action: 'fail',
        code: 'start_rejected',
        userRecoverable: false,
      });
      if (action.action === 'fail' && message.trim() !== '') {
        expect(action.reason).toBe(`start_rejected: ${message.trim()}`);
      }
    },
  );

  test.prop([limits, fc.constantFrom('unavailable', 'timeout'), fc.integer({ min: 1, max: 100 })])(
    'an engine outage keeps the session until the limit, then fails it as recoverable',
    (l, c, attempt) => {
      const action = startFailureAction({ ...l, code: c, attempt });
      if (attempt < l.maxAttempts) {
        expect(action).toEqual({
          action: 'retry_later',
          delayMs: startRetryDelayMs(attempt, l),
          reason: 'engine_unavailable',
        });
      } else {
        expect(action).toEqual({
          action: 'fail',
          code: 'engine_unavailable',
          reason: `engine_unavailable after ${attempt} attempts`,
          userRecoverable: true,
        });
      }
    },
  );

  it('the documented defaults: 8 attempts, 1 s doubling to 30 s', () => {
    expect(START_FAILURE_DEFAULTS).toEqual({
      maxAttempts: 8,
      baseDelayMs: 1000,
      maxDelayMs: 30_000,
    });
    const delays = [1, 2, 3, 4, 5, 6, 7].map((a) => startRetryDelayMs(a));
    expect(delays).toEqual([1000, 2000, 4000, 8000, 16_000, 30_000, 30_000]);
    expect(startFailureAction({ code: 'unavailable', attempt: 8 }).action).toBe('fail');
  });

  it('rejects limits and attempts that make no sense, naming the field', () => {
    const bad = [
      { code: 'timeout', attempt: 0 },
      { code: 'timeout', attempt: 1.5 },
      { code: 'timeout', attempt: 1, maxAttempts: 0 },
      { code: 'timeout', attempt: 1, baseDelayMs: -1 },
      { code: 'timeout', attempt: 1, baseDelayMs: 10, maxDelayMs: 5 },
      { code: 'timeout', attempt: 1, maxDelayMs: Number.POSITIVE_INFINITY },
    ];
    const fields = ['attempt', 'attempt', 'maxAttempts', 'baseDelayMs', 'maxDelayMs', 'maxDelayMs'];
    bad.forEach((failure, i) => {
      expect(() => startFailureAction(failure)).toThrow(RangeError);
      expect(() => startFailureAction(failure)).toThrow(fields[i]);
    });
  });

  it('a blank message adds nothing to the reason', () => {
    expect(startFailureAction({ code: 'rejected', message: '  ', attempt: 1 })).toMatchObject({
      reason: 'start_rejected',
    });
  });
});
