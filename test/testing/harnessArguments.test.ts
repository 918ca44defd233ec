import { expect, test } from 'vitest';
import * as mod from '../../src/testing/harnessArguments.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/testing/harnessArguments.ts', import.meta.url), mod);

test("advance's error names the argument and what it takes", () => {
  expect(() => mod.checkAdvanceMs(Number.NaN)).toThrow(
    'harness: advance.ms must be a finite number of ms >= 0 (virtual time only moves forward), got NaN',
  );
});
