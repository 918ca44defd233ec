import { fc, test } from '@fast-check/vitest';
import { describe, expect } from 'vitest';
import * as policy from '../../src/machines/recoveryPolicy.js';
import { recoveryAction } from '../../src/machines/recoveryPolicy.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/machines/recoveryPolicy.ts', import.meta.url), policy);

describe('recoveryAction', () => {
  test.prop([
    fc.constantFrom('swarm', 'docker', 'local', 'simulated' as const),
    fc.constantFrom('run', 'bootstrap' as const),
    fc.option(fc.string(), { nil: null }),
    fc.constantFrom('present', 'absent', 'unknown' as const),
  ])(
    'adopts exactly a present, handled, non-bootstrap run, whatever the backend',
    (backend, kind, handle, presence) => {
      // Every kind, local included: a local run is a detached process that outlives its node.
      const expected =
        kind === 'run' && handle !== null && handle !== '' && presence === 'present'
          ? 'adopt'
          : 'fail';
      expect(recoveryAction({ backend, kind, handle, presence })).toBe(expected);
    },
  );
});
