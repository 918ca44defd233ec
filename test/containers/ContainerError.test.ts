import { expect, it } from 'vitest';
import * as errors from '../../src/containers/ContainerError.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/containers/ContainerError.ts', import.meta.url), errors);

it('keeps the cause', () => {
  const cause = new Error('ECONNREFUSED');
  expect(new errors.ContainerError('unavailable', 'down', { cause }).cause).toBe(cause);
});
