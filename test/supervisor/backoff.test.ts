import * as mod from '../../src/supervisor/backoff.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/supervisor/backoff.ts', import.meta.url), mod);

import { fc, test } from '@fast-check/vitest';
import { expect } from 'vitest';

test.prop([
  fc.nat({ max: 80 }),
  fc.integer({ min: 1, max: 1000 }),
  fc.integer({ min: 0, max: 100_000 }),
  fc.double({ min: 0, max: 1, noNaN: true }),
  fc.double({ min: 0, max: 1, noNaN: true }),
])(
  'delays stay within [min, max * (1 + randomFactor)] and never shrink with the attempt',
  (attempt, min, extra, factor, r) => {
    const opts = { minMs: min, maxMs: min + extra, randomFactor: factor, resetAfterMs: 1 };
    const d = mod.backoffDelay(attempt, opts, () => r);
    expect(d).toBeGreaterThanOrEqual(min);
    expect(d).toBeLessThanOrEqual(Math.round((min + extra) * (1 + factor)));
    expect(mod.backoffDelay(attempt + 1, opts, () => r)).toBeGreaterThanOrEqual(d);
  },
);
