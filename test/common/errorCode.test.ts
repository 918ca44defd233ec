import { expect, test } from 'vitest';
import * as mod from '../../src/common/errorCode.js';
import { errorCode } from '../../src/common/errorCode.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/common/errorCode.ts', import.meta.url), mod);

test('a code that is not a string is no code', () => {
  expect(errorCode({ code: 404 })).toBeUndefined();
  expect(errorCode(null)).toBeUndefined();
});
