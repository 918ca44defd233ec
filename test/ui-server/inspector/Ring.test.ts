import { fc, test } from '@fast-check/vitest';
import { describe, expect } from 'vitest';
import * as mod from '../../../src/ui-server/inspector/Ring.js';
import { runDocExamples } from '../../support/docExamples.js';

runDocExamples(new URL('../../../src/ui-server/inspector/Ring.ts', import.meta.url), mod);

describe('Ring against an unbounded array', () => {
  test.prop([
    fc.integer({ min: 1, max: 10 }),
    fc.array(fc.integer(), { maxLength: 60 }),
    fc.nat(70),
  ])(
    'since(cursor) returns the kept suffix after the cursor and says when items were lost',
    (capacity, pushes, rawCursor) => {
      const ring = new mod.Ring<number>(capacity);
      for (const p of pushes) ring.push(p);
      const cursor = Math.min(rawCursor, pushes.length);
      const read = ring.since(cursor);
      const kept = pushes.slice(Math.max(0, pushes.length - capacity));
      const wanted = pushes.slice(cursor);
      expect(read.next).toBe(pushes.length);
      expect(read.lost).toBe(wanted.length > kept.length);
      expect(read.items).toEqual(read.lost ? kept : wanted);
      expect(ring.size).toBe(kept.length);
    },
  );
});
