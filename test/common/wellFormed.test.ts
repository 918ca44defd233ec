import { fc, test } from '@fast-check/vitest';
import { expect } from 'vitest';
import * as wellFormed from '../../src/common/wellFormed.js';
import { isWellFormed } from '../../src/common/wellFormed.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/common/wellFormed.ts', import.meta.url), wellFormed);

test.prop([fc.string({ unit: 'grapheme' })])(
  'a string that survives a round trip through UTF-8 is well-formed',
  (text) => {
    expect(isWellFormed(text)).toBe(true);
    expect(Buffer.from(text, 'utf8').toString('utf8')).toBe(text);
  },
);

test.prop([fc.string(), fc.integer({ min: 0xd800, max: 0xdfff }), fc.string()])(
  'one lone surrogate anywhere makes a string ill-formed',
  (before, unit, after) => {
    // A high surrogate followed by a low one is a pair: keep the neighbours out of range.
    const text = `${before}x${String.fromCharCode(unit)}x${after}`;
    expect(isWellFormed(text)).toBe(false);
  },
);

test.prop([fc.string({ unit: 'grapheme' }), fc.nat({ max: 300 })])(
  'a well-formed string cut anywhere stays well-formed, a prefix at most one unit short',
  (text, max) => {
    const cut = wellFormed.cutWellFormed(text, max);
    expect(isWellFormed(cut)).toBe(true);
    expect(text.startsWith(cut)).toBe(true);
    expect(cut.length).toBeGreaterThanOrEqual(Math.min(max, text.length) - 1);
  },
);
