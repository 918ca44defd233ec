import * as mod from '../../src/supervisor/childSpec.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/supervisor/childSpec.ts', import.meta.url), mod);

import { describe, expect, it } from 'vitest';
import { ChildSpecError } from '../../src/supervisor/errors.js';
import { worker } from './workers.js';

describe('validateChildSpec names the bad field', () => {
  const ok = { id: 'a', start: { logic: worker } };
  const cases: [string, unknown][] = [
    ['spec', null],
    ['id', { ...ok, id: 3 }],
    ['start', { ...ok, start: 'nope' }],
    ['start.logic', { ...ok, start: { logic: {} } }],
    ['start.supervisor', { ...ok, start: { supervisor: {} } }],
    ['restart', { ...ok, restart: 'sometimes' }],
    ['type', { ...ok, type: 'supervisor' }],
    ['shutdown', { ...ok, shutdown: 'later' }],
    ['significant', { ...ok, significant: 'yes' }],
    ['significant', { ...ok, significant: true }],
    ['name', { ...ok, name: '' }],
    ['restarts', { ...ok, restarts: 'permanent' }],
    ['backoff', { ...ok, backoff: 5 }],
    [
      'backoff.minMs',
      { ...ok, backoff: { minMs: -1, maxMs: 1, randomFactor: 0, resetAfterMs: 0 } },
    ],
    [
      'backoff.maxMs',
      { ...ok, backoff: { minMs: 10, maxMs: 1, randomFactor: 0, resetAfterMs: 0 } },
    ],
    [
      'backoff.maxRestarts',
      {
        ...ok,
        backoff: { minMs: 1, maxMs: 1, randomFactor: 0, resetAfterMs: 0, maxRestarts: 1.5 },
      },
    ],
  ];
  it.each(cases)('%s', (field, spec) => {
    try {
      mod.validateChildSpec(spec);
      expect.unreachable('should have thrown');
    } catch (e) {
      expect(e).toBeInstanceOf(ChildSpecError);
      expect((e as ChildSpecError).field).toBe(field);
      expect((e as ChildSpecError).code).toBe('INVALID_CHILD_SPEC');
    }
  });
});
