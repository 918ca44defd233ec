import { fc, test } from '@fast-check/vitest';
import { expect } from 'vitest';
import * as mod from '../../src/machines/userAtCap.js';
import { userAtCap } from '../../src/machines/userAtCap.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/machines/userAtCap.ts', import.meta.url), mod);

test.prop([fc.nat(50), fc.nat(50)])(
  'at cap exactly when the user holds no fewer runners than their cap, with both numbers',
  (running, maxRunning) => {
    const answer = userAtCap({ running, maxRunning });
    expect(answer === null).toBe(running < maxRunning);
    if (answer !== null) expect(answer).toEqual({ running, max: maxRunning });
  },
);
