import { fc, test } from '@fast-check/vitest';
import { expect } from 'vitest';
import * as mod from '../../src/common/didYouMean.js';
import { didYouMean, editDistance } from '../../src/common/didYouMean.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/common/didYouMean.ts', import.meta.url), mod);

test.prop([fc.string(), fc.string()])(
  'edit distance is symmetric and bounded by length',
  (a, b) => {
    const d = editDistance(a, b);
    expect(d).toBe(editDistance(b, a));
    expect(d).toBeLessThanOrEqual(Math.max(a.length, b.length));
    expect(d === 0).toBe(a === b);
  },
);

test.prop([fc.array(fc.string({ minLength: 1 }), { minLength: 1 })])(
  'a known name suggests itself',
  (known) => {
    expect(didYouMean(known[0]!, known)?.toLowerCase()).toBe(known[0]!.toLowerCase());
  },
);
