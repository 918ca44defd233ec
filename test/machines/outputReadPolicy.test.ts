import { fc, test } from '@fast-check/vitest';
import { describe, expect } from 'vitest';
import * as policy from '../../src/machines/outputReadPolicy.js';
import { decideOutputRead } from '../../src/machines/outputReadPolicy.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/machines/outputReadPolicy.ts', import.meta.url), policy);

const code = fc.constantFrom(
  'unavailable',
  'timeout',
  'not_found',
  'rejected',
  'engine',
  'conflict',
  'invalid_argument',
  null,
);
const failure = fc.record({
  code,
  elapsedMs: fc.integer({ min: 0, max: 2_000_000 }),
  budgetMs: fc.integer({ min: 0, max: 1_000_000 }),
  pollMs: fc.integer({ min: 1, max: 60_000 }),
});

describe('decideOutputRead', () => {
  test.prop([failure])('only an engine outage inside the budget is read again', (f) => {
    const d = decideOutputRead(f);
    const recoverable = f.code === 'unavailable' || f.code === 'timeout';
    expect(d.kind === 'read_again').toBe(recoverable && f.elapsedMs < f.budgetMs);
  });

  test.prop([failure])('the next read never comes later than pollMs, nor after the budget', (f) => {
    const d = decideOutputRead(f);
    if (d.kind !== 'read_again') return;
    expect(d.inMs).toBeGreaterThan(0);
    expect(d.inMs).toBeLessThanOrEqual(f.pollMs);
    expect(f.elapsedMs + d.inMs).toBeLessThanOrEqual(f.budgetMs);
  });

  test.prop([fc.integer({ min: 0, max: 600_000 }), fc.integer({ min: 1, max: 30_000 })])(
    'following the answers from the first failure, reads stop once the budget is spent',
    (budgetMs, pollMs) => {
      let elapsedMs = 0;
      let reads = 0;
      for (;;) {
        const d = decideOutputRead({ code: 'unavailable', elapsedMs, budgetMs, pollMs });
        if (d.kind === 'give_up') break;
        elapsedMs += d.inMs;
        reads++;
      }
      expect(elapsedMs).toBe(budgetMs);
      expect(reads).toBe(Math.ceil(budgetMs / pollMs));
    },
  );
});
