import { fc, test } from '@fast-check/vitest';
import { describe, expect } from 'vitest';
import * as localHandle from '../../../src/containers/local/localHandle.js';
import {
  formatLocalHandle,
  LOCAL_HANDLE_MAX,
  parseLocalHandle,
} from '../../../src/containers/local/localHandle.js';
import { handle as handleColumn } from '../../../src/db/inputs.js';
import { runDocExamples } from '../../support/docExamples.js';

runDocExamples(
  new URL('../../../src/containers/local/localHandle.ts', import.meta.url),
  localHandle,
);

describe('local handles', () => {
  test.prop([
    fc.stringMatching(/^[A-Za-z0-9_-]{1,60}$/),
    fc.integer({ min: 1, max: 4_194_304 }),
    fc.bigInt({ min: 0n, max: 2n ** 63n }).map(String),
    fc.stringMatching(/^[0-9a-f]{1,16}$/),
  ])(
    'parse(format(h)) is h, and the handle column of the session row takes it',
    (sessionId, pid, startToken, bootToken) => {
      const h = { sessionId, pid, startToken, bootToken };
      const text = formatLocalHandle(h);
      expect(parseLocalHandle(text)).toEqual(h);
      // The session row stores it: the store's own check must take it.
      expect(handleColumn.safeParse(text).success).toBe(true);
    },
  );

  test.prop([fc.string()])(
    'anything else parses to null or to a handle that formats back to itself',
    (text) => {
      const h = parseLocalHandle(text);
      if (h !== null) expect(formatLocalHandle(h)).toBe(text);
    },
  );

  test.prop([
    fc.stringMatching(/^[A-Za-z0-9_-]{1,40}$/),
    fc.integer({ min: 1, max: 4_194_304 }),
    fc.stringMatching(/^[0-9a-f]{8}$/),
    fc.array(fc.stringMatching(/^[^/\0]{1,12}$/), { minLength: 1, maxLength: 6 }),
  ])(
    'a handle naming its run directory round-trips, or is refused as too long, never cut',
    (sessionId, pid, bootToken, parts) => {
      const h = { sessionId, pid, startToken: '45565', bootToken, dir: `/${parts.join('/')}` };
      let text: string;
      try {
        text = formatLocalHandle(h);
      } catch (error) {
        expect(error).toMatchObject({ code: 'invalid_argument' });
        return;
      }
      expect(text.length).toBeLessThanOrEqual(LOCAL_HANDLE_MAX);
      expect(parseLocalHandle(text)).toEqual(h);
      expect(handleColumn.safeParse(text).success).toBe(true);
    },
  );
});
