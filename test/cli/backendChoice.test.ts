import { fc, test } from '@fast-check/vitest';
import { describe, expect } from 'vitest';
import * as choice from '../../src/cli/backendChoice.js';
import { decideBackend } from '../../src/cli/backendChoice.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/cli/backendChoice.ts', import.meta.url), choice);

const probe = fc.oneof(
  fc.record({
    answered: fc.constant(true as const),
    swarm: fc.constantFrom('manager' as const, 'worker' as const, 'inactive' as const),
  }),
  fc.record({ answered: fc.constant(false as const), error: fc.string() }),
);

describe('decideBackend', () => {
  test.prop([probe])('auto never picks the simulated cluster, and says why', (engine) => {
    const d = decideBackend('auto', 'default', 'unix:///x.sock', engine);
    expect(d.name).not.toBe('simulated');
    expect(d.reason.startsWith('auto: ')).toBe(true);
    const expected = !engine.answered ? 'local' : engine.swarm === 'manager' ? 'swarm' : 'docker';
    expect(d.name).toBe(expected);
  });

  test.prop([
    fc.constantFrom('local', 'docker', 'swarm', 'simulated' as const),
    fc.option(probe, { nil: null }),
  ])('a named backend is that backend, whatever the engine says', (name, engine) => {
    expect(decideBackend(name, '--backend', 'x', engine)).toEqual({
      name,
      reason: `${name}, as --backend says`,
    });
  });
});
