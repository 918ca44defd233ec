import { fc, test } from '@fast-check/vitest';
import { expect } from 'vitest';
import * as mod from '../../src/client/backoff.js';
import { backoffDelay, DEFAULT_BACKOFF } from '../../src/client/backoff.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/client/backoff.ts', import.meta.url), mod);

test.prop([fc.nat(200), fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true })])(
  'stays between half the capped exponential and all of it, never above the cap',
  (attempt, r) => {
    const d = backoffDelay(attempt, DEFAULT_BACKOFF, () => r);
    const capped = Math.min(DEFAULT_BACKOFF.maxMs, DEFAULT_BACKOFF.initialMs * 2 ** attempt);
    expect(d).toBeGreaterThanOrEqual(Math.floor(capped / 2));
    expect(d).toBeLessThanOrEqual(DEFAULT_BACKOFF.maxMs);
  },
);
