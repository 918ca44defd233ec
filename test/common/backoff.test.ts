import { fc, test } from '@fast-check/vitest';
import { expect } from 'vitest';
import * as mod from '../../src/common/backoff.js';
import { backoffDelay } from '../../src/common/backoff.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/common/backoff.ts', import.meta.url), mod);

test.prop([
  fc.nat({ max: 80 }),
  fc.integer({ min: 1, max: 1000 }),
  fc.integer({ min: 0, max: 100_000 }),
  fc.double({ min: 0, max: 1, noNaN: true }),
  fc.double({ min: 0, max: 1, noNaN: true }),
])(
  'delays stay within [min, max * (1 + randomFactor)] and never shrink with the attempt',
  (attempt, min, extra, factor, r) => {
    const delays = { minMs: min, maxMs: min + extra, randomFactor: factor };
    const d = backoffDelay(attempt, delays, () => r);
    expect(d).toBeGreaterThanOrEqual(min);
    expect(d).toBeLessThanOrEqual(Math.round((min + extra) * (1 + factor)));
    expect(backoffDelay(attempt + 1, delays, () => r)).toBeGreaterThanOrEqual(d);
  },
);

test.prop([fc.nat({ max: 80 }), fc.integer({ min: 1, max: 1000 }), fc.nat(10_000)])(
  'without jitter the delay is the capped exponential and the random source is never asked',
  (attempt, min, extra) => {
    const d = backoffDelay(attempt, { minMs: min, maxMs: min + extra }, () => {
      throw new Error('asked for randomness');
    });
    expect(d).toBe(Math.round(Math.min(min + extra, min * 2 ** attempt)));
  },
);
