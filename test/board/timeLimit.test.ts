import { expect, it } from 'vitest';
import * as mod from '../../src/board/timeLimit.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/board/timeLimit.ts', import.meta.url), mod);

it('takes whole milliseconds from one second to the column integer, and says why not', () => {
  expect(mod.timeLimitMs.safeParse(mod.MIN_TIME_LIMIT_MS).success).toBe(true);
  expect(mod.timeLimitMs.safeParse(mod.MAX_TIME_LIMIT_MS).success).toBe(true);
  expect(mod.timeLimitMs.safeParse('60000').success).toBe(false);
  expect(mod.timeLimitMs.safeParse(-1).error?.issues[0]?.message).toBe('at least 1000 ms');
});
