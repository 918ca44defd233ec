import { fc, test } from '@fast-check/vitest';
import { describe, expect } from 'vitest';
import * as policy from '../../src/machines/recoveryPolicy.js';
import { recoveryAction, UNOBSERVABLE_GRACE_MS } from '../../src/machines/recoveryPolicy.js';
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

  test.prop([
    fc.constantFrom('swarm', 'docker', 'local', 'simulated' as const),
    fc.constantFrom('run', 'bootstrap' as const),
    fc.option(fc.string(), { nil: null }),
    fc.constantFrom('present', 'absent', 'unknown', 'unobservable' as const),
    fc.option(fc.integer({ min: 0, max: 2 * UNOBSERVABLE_GRACE_MS }), { nil: undefined }),
  ])(
    'waits on an unobservable run exactly within the grace; else as if the time did not count',
    (backend, kind, handle, presence, unobservableForMs) => {
      const action = recoveryAction({ backend, kind, handle, presence, unobservableForMs });
      const handled = kind === 'run' && handle !== null && handle !== '';
      const within = (unobservableForMs ?? 0) < UNOBSERVABLE_GRACE_MS;
      if (handled && presence === 'unobservable') expect(action).toBe(within ? 'wait' : 'fail');
      else expect(action).toBe(handled && presence === 'present' ? 'adopt' : 'fail');
      // Only an unobservable run is ever left waiting: a run seen absent is never kept.
      if (action === 'wait') expect(presence).toBe('unobservable');
    },
  );

  test.prop([
    fc.constantFrom('swarm', 'docker', 'local', 'simulated' as const),
    fc.constantFrom('run', 'bootstrap' as const),
    fc.constantFrom('present', 'absent', 'unknown', 'unobservable' as const),
    fc.option(fc.boolean(), { nil: undefined }),
  ])(
    'a run found by name is discarded exactly when its container is there with nothing begun in it',
    (backend, kind, presence, begun) => {
      const action = recoveryAction({ backend, kind, handle: 'rt-s1', presence, begun });
      const recorded = recoveryAction({ backend, kind, handle: 'rt-s1', presence });
      if (kind === 'run' && presence === 'present' && begun === false)
        expect(action).toBe('discard');
      // Otherwise `begun` changes nothing: a begun run is adopted as a recorded one would be.
      else expect(action).toBe(recorded);
      // Never discarded while it may have begun: that would cut a running command short.
      if (action === 'discard') expect(begun).toBe(false);
    },
  );
});
