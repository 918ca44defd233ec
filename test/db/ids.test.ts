import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { handleFor } from '../../src/containers/wrapper.js';
import { ValidationError } from '../../src/db/errors.js';
import * as ids from '../../src/db/ids.js';
import { assertName, isId, newId } from '../../src/db/ids.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/db/ids.ts', import.meta.url), ids);

describe('ids', () => {
  it('mints ids of their own kind only', () => {
    const task = newId('task');
    const session = newId('session');
    expect(isId('task', task)).toBe(true);
    expect(isId('session', session)).toBe(true);
    expect(isId('session', task)).toBe(false);
    expect(isId('task', session)).toBe(false);
    expect(newId('session')).not.toBe(session);
  });

  test.prop([fc.string({ maxLength: 60 })])('accepts no arbitrary string as an id', (s) => {
    fc.pre(!/^(tsk|ses)_[0-9a-f]{32}$/.test(s));
    expect(isId('task', s) || isId('session', s)).toBe(false);
  });

  test.prop([fc.string({ maxLength: 200 })])(
    'a name that passes carries no space, quote, slash or shell character',
    (s) => {
      let ok = true;
      try {
        assertName(s, 'userId');
      } catch (error) {
        expect(error).toBeInstanceOf(ValidationError);
        expect((error as ValidationError).field).toBe('userId');
        ok = false;
      }
      if (ok) {
        expect(s.length).toBeGreaterThan(0);
        expect(s.length).toBeLessThanOrEqual(128);
        expect(s).not.toMatch(/[\s'"`;$&|<>/\\()*?]/);
      }
    },
  );

  it('names containers and services from session ids alone (rt-ses_<hex>), as docs/data.md says', () => {
    for (let n = 0; n < 50; n++) {
      const id = newId('session');
      const name = handleFor(id);
      expect(name).toBe(`rt-${id}`);
      // Docker's rule for container and service names, and Swarm's 63-character cap.
      expect(name).toMatch(/^rt-ses_[0-9a-f]{32}$/);
      expect(name).toMatch(/^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,62}$/);
    }
  });
});
