import { fc, test } from '@fast-check/vitest';
import { expect } from 'vitest';
import * as mod from '../../src/ui-server/patchLog.js';
import { PatchLog } from '../../src/ui-server/patchLog.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/ui-server/patchLog.ts', import.meta.url), mod);

test.prop([fc.integer({ min: 1, max: 20 }), fc.nat(60), fc.nat(70)])(
  'resume replays exactly the patches after seq, or asks for a snapshot when they are gone',
  (capacity, appended, from) => {
    const log = new PatchLog('e', capacity);
    for (let i = 0; i < appended; i++) log.append((seq) => `p${seq}`);
    const d = log.resume({ epoch: 'e', seq: from });
    const replayable = from <= appended && appended - from <= capacity;
    if (!replayable) {
      expect(d).toEqual({ kind: 'snapshot' });
      return;
    }
    expect(d.kind).toBe('replay');
    const seqs = d.kind === 'replay' ? d.patches.map((p) => p.seq) : [];
    expect(seqs).toEqual(Array.from({ length: appended - from }, (_, i) => from + 1 + i));
  },
);

test('capacity must be a positive integer', () => {
  expect(() => new PatchLog('e', 0)).toThrow(RangeError);
});
