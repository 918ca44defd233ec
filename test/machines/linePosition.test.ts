/**
 * The position formula against a brute-force count: for any set of lines
 * (contiguous turns per user, distinct join numbers) and any queued key,
 * the clamp sum equals the number of queued keys smaller than it, plus one.
 */
import { fc, test } from '@fast-check/vitest';
import { describe, expect } from 'vitest';
import * as linePosition from '../../src/machines/linePosition.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/machines/linePosition.ts', import.meta.url), linePosition);

const lines = fc.uniqueArray(fc.nat({ max: 50 }), { minLength: 1, maxLength: 8 }).chain((joins) =>
  fc.tuple(
    ...joins.map((joinSeq) =>
      fc.record({
        headTurn: fc.integer({ min: -3, max: 10 }),
        queued: fc.nat({ max: 6 }),
        joinSeq: fc.constant(joinSeq),
      }),
    ),
  ),
);

describe('positionOf', () => {
  test.prop([lines, fc.nat({ max: 100 })], { numRuns: 300 })(
    'equals 1 + the queued keys before it, for every queued session',
    (ls, pick) => {
      const keys = ls.flatMap((l) =>
        Array.from({ length: l.queued }, (_, i) => ({ turn: l.headTurn + i, joinSeq: l.joinSeq })),
      );
      if (keys.length === 0) return;
      const key = keys[pick % keys.length] as { turn: number; joinSeq: number };
      const before = keys.filter(
        (k) => k.turn < key.turn || (k.turn === key.turn && k.joinSeq < key.joinSeq),
      ).length;
      expect(linePosition.positionOf(ls, key)).toBe(before + 1);
    },
  );
});
