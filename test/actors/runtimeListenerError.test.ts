import { expect, test } from 'vitest';
import * as mod from '../../src/actors/runtimeListenerError.js';
import * as api from '../../src/index.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/actors/runtimeListenerError.ts', import.meta.url), mod);

test('the package exports it, so an app can tell a listener of its own that threw from other reports', () => {
  const e = new api.RuntimeListenerError('supervisor_event', new Error('bug'));
  expect(e).toBeInstanceOf(Error);
  expect(e.message).toBe('an onSupervisorEvent listener threw: bug');
  expect(e.cause).toEqual(new Error('bug'));
});
