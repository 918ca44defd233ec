/**
 * What a failed tick does to its ops. The dispatcher applying it (the
 * backoff, the bad op found one per tick, the deadline) is
 * test/actors/dispatcher.test.ts.
 */
import { expect, test } from 'vitest';
import * as failure from '../../src/actors/dispatcherFailure.js';
import { afterFailure, splitLate } from '../../src/actors/dispatcherFailure.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/actors/dispatcherFailure.ts', import.meta.url), failure);

test('a split batch keeps its order and its entries, marked solo; the originals are not changed', () => {
  const batch = [
    { id: 1, solo: false },
    { id: 2, solo: false },
    { id: 3, solo: true },
  ];
  const decided = afterFailure(batch, false);
  expect(decided.requeued).toEqual([
    { id: 1, solo: true },
    { id: 2, solo: true },
    { id: 3, solo: true },
  ]);
  expect(batch.map((e) => e.solo)).toEqual([false, false, true]);
});

test('a transient failure of one op retries it: it is not the bad one', () => {
  const one = { solo: true };
  expect(afterFailure([one], true)).toEqual({ rejected: null, requeued: [one], report: false });
});

test('splitLate keeps the order on both sides', () => {
  const e = (at: number) => ({ at });
  expect(splitLate([e(1), e(9), e(2), e(8)], 5)).toEqual({
    keep: [e(9), e(8)],
    late: [e(1), e(2)],
  });
});
