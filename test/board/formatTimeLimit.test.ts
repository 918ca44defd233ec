import { expect, it } from 'vitest';
import * as mod from '../../src/board/formatTimeLimit.js';
import { timeLimitFlag } from '../../src/cli/commands/enqueue.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/board/formatTimeLimit.ts', import.meta.url), mod);

it('what it prints, `enqueue --time-limit` reads back', () => {
  for (const ms of [1_000, 1_500, 90_000, 1_800_000, 5_400_000, 86_400_000, 2_147_483_000])
    expect(timeLimitFlag(mod.formatTimeLimit(ms))).toBe(ms);
});
