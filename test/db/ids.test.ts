import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/db/errors.js';
import * as ids from '../../src/db/ids.js';
import { assertName, containerNameFor, isId, newId } from '../../src/db/ids.js';
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

  it('derives container names from session ids alone, DNS-safe and short', () => {
    for (let n = 0; n < 50; n++) {
      const name = containerNameFor(newId('session'));
      expect(name).toMatch(/^[a-z0-9-]{1,63}$/);
    }
    expect(() => containerNameFor(newId('task'))).toThrow(ValidationError);
  });
});
