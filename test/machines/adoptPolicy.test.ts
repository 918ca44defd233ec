import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import * as policy from '../../src/machines/adoptPolicy.js';
import { containerReplaced, decide } from '../../src/machines/adoptPolicy.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/machines/adoptPolicy.ts', import.meta.url), policy);

describe('decide', () => {
  it('gives up with container_replaced on the real incident timestamps', () => {
    const container = new Date('2026-07-14T12:47:00Z');
    const session = new Date('2026-07-14T10:44:00Z');
    expect(decide(container, session, 0, 900_000)).toEqual({
      kind: 'give_up',
      reason: 'container_replaced',
    });
  });

  it('names the bad argument in its RangeError', () => {
    expect(() => decide(null, null, Number.NaN, 1)).toThrow(/elapsedMs/);
    expect(() => decide(null, null, -5, 1)).toThrow(/elapsedMs/);
    expect(() => decide(null, null, 0, 0)).toThrow(/budgetMs/);
    expect(() => decide(null, null, 0, -1)).toThrow(/budgetMs/);
    expect(() => decide(null, null, 0, Number.NaN)).toThrow(/budgetMs/);
  });

  const instant = fc.oneof(
    fc.integer({ min: 1, max: 4_000_000_000_000 }).map((ms) => new Date(ms)),
    fc.constantFrom(null, undefined, 'garbage', '0001-01-01T00:00:00Z', new Date(Number.NaN)),
  );

  test.prop([instant, instant, fc.nat(), fc.integer({ min: 1, max: 10_000_000 })])(
    'replacement wins over the budget; the budget alone decides when timestamps are unknown',
    (container, session, elapsed, budget) => {
      const d = decide(container, session, elapsed, budget);
      if (containerReplaced(container, session)) {
        expect(d).toEqual({ kind: 'give_up', reason: 'container_replaced' });
      } else if (elapsed >= budget) {
        expect(d).toEqual({ kind: 'give_up', reason: 'timeout' });
      } else {
        expect(d).toEqual({ kind: 'poll' });
      }
    },
  );

  test.prop([instant, instant])('an unknown timestamp is never evidence of replacement', (a, b) => {
    const known = (v: unknown) => v instanceof Date && !Number.isNaN(v.getTime());
    if (!known(a) || !known(b)) expect(containerReplaced(a, b)).toBe(false);
    else expect(containerReplaced(a, b)).toBe((a as Date).getTime() > (b as Date).getTime());
  });
});
