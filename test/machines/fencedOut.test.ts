import { fc, test } from '@fast-check/vitest';
import { describe, expect } from 'vitest';
import * as decision from '../../src/machines/fencedOut.js';
import { cancelledElsewhere, fencedOut } from '../../src/machines/fencedOut.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/machines/fencedOut.ts', import.meta.url), decision);

const ids = fc.constantFrom('ses_a', 'ses_b', 'ses_c', 'ses_d');
const epochs = fc.dictionary(ids, fc.nat(10)).map((d) => new Map(Object.entries(d)));

describe('fencedOut', () => {
  test.prop([epochs, epochs], { numRuns: 500 })(
    'names exactly the held sessions whose row moved past the held epoch, in held order',
    (held, rows) => {
      const out = fencedOut(held, rows);
      expect(out).toEqual(
        [...held].filter(([id, e]) => (rows.get(id) ?? -1) > e).map(([id]) => id),
      );
    },
  );
});

const states = fc
  .dictionary(
    ids,
    fc.record({ epoch: fc.nat(10), status: fc.constantFrom('running', 'cancelled', 'succeeded') }),
  )
  .map((d) => new Map(Object.entries(d)));

describe('cancelledElsewhere', () => {
  test.prop([epochs, states], { numRuns: 500 })(
    'names exactly the held sessions whose row is cancelled at the held epoch, in held order',
    (held, rows) => {
      expect(cancelledElsewhere(held, rows)).toEqual(
        [...held]
          .filter(([id, e]) => rows.get(id)?.status === 'cancelled' && rows.get(id)?.epoch === e)
          .map(([id]) => id),
      );
    },
  );
});
