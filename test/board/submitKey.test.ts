import { expect, it } from 'vitest';
import * as mod from '../../src/board/submitKey.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/board/submitKey.ts', import.meta.url), mod);

it('takes every visible ASCII character and nothing else', () => {
  for (let c = 0; c < 256; c++) {
    const ok = mod.submitKey.safeParse(`k${String.fromCharCode(c)}`).success;
    expect(ok, `code ${c}`).toBe(c >= 0x21 && c <= 0x7e);
  }
  expect(mod.submitKey.safeParse('x'.repeat(255)).success).toBe(true);
});
