import { expect, it } from 'vitest';
import { ContainerError } from '../../src/containers/ContainerError.js';
import * as observation from '../../src/containers/observation.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/containers/observation.ts', import.meta.url), {
  ...observation,
  ContainerError,
});

it('only not_found is absent: every other code is unknown', () => {
  const codes = ['timeout', 'unavailable', 'conflict', 'engine', 'exec_lost', 'aborted'] as const;
  for (const code of codes) {
    expect(observation.unknownOrAbsent(new ContainerError(code, code)).presence).toBe('unknown');
  }
});
