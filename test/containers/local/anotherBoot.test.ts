import { fc, test } from '@fast-check/vitest';
import { describe, expect } from 'vitest';
import * as anotherBoot from '../../../src/containers/local/anotherBoot.js';
import { observedFromAnotherBoot } from '../../../src/containers/local/anotherBoot.js';
import { runDocExamples } from '../../support/docExamples.js';

runDocExamples(
  new URL('../../../src/containers/local/anotherBoot.ts', import.meta.url),
  anotherBoot,
);

describe('observedFromAnotherBoot', () => {
  test.prop([
    fc.option(fc.integer({ min: 0, max: 255 }), { nil: null }),
    fc.option(fc.date({ noInvalidDate: true }), { nil: null }),
    fc.boolean(),
  ])(
    'absent only for this node’s own record with no marker; never absent without it',
    (exitCode, startedAt, ownRecord) => {
      const o = observedFromAnotherBoot({ exitCode, startedAt, ownRecord });
      if (exitCode !== null)
        expect(o).toEqual({
          presence: 'present',
          containerStartedAt: startedAt,
          marker: { exitCode },
        });
      else expect(o.presence).toBe(ownRecord ? 'absent' : 'unobservable');
    },
  );
});
