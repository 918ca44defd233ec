import { fc, test } from '@fast-check/vitest';
import { describe, expect } from 'vitest';
import * as policy from '../../src/machines/livenessPolicy.js';
import { livenessVerdict, type OwnerEvidence } from '../../src/machines/livenessPolicy.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/machines/livenessPolicy.ts', import.meta.url), policy);

const evidence = fc.record<OwnerEvidence>({
  sameNode: fc.boolean(),
  beatAgeMs: fc.option(fc.integer({ min: -10_000, max: 1_000_000 }), { nil: null }),
  replaced: fc.boolean(),
  lock: fc.constantFrom('held', 'released', 'unknown'),
  staleAfterMs: fc.integer({ min: 1, max: 600_000 }),
  self: fc.constantFrom('held', 'lost', 'busy', 'none'),
});

describe('livenessVerdict', () => {
  test.prop([evidence], { numRuns: 2_000 })(
    'a node that cannot prove it is alive judges nobody: it never takes over',
    (e) => {
      const v = livenessVerdict(e);
      if (e.self === 'lost' || e.self === 'busy')
        expect(v).toEqual({ owner: 'unknown', act: 'wait' });
      else expect(v.owner).not.toBe('unknown');
    },
  );

  test.prop([evidence], { numRuns: 2_000 })(
    'an owner with a held lock and a fresh beat, not replaced, another node: always left alone',
    (e) => {
      const fresh = {
        ...e,
        sameNode: false,
        replaced: false,
        lock: 'held' as const,
        beatAgeMs: Math.min(e.staleAfterMs, Math.abs(e.beatAgeMs ?? 0)),
      };
      expect(livenessVerdict(fresh).act).not.toBe('take_over');
    },
  );

  test.prop([evidence], { numRuns: 2_000 })(
    'two ways to notice: a released lock is enough, and so is a stale beat whatever the lock says',
    (e) => {
      const judged = { ...e, self: 'held' as const };
      const v = livenessVerdict(judged);
      const stale = judged.beatAgeMs === null || judged.beatAgeMs > judged.staleAfterMs;
      if (judged.lock === 'released' || stale || judged.replaced || judged.sameNode)
        expect(v.act).toBe('take_over');
      else expect(v).toEqual({ owner: 'alive', act: 'leave' });
    },
  );

  test.prop([evidence], { numRuns: 1_000 })(
    'an unknown lock (PGlite, a pooler) gives the beat the whole say: the verdict is the heartbeat-only one',
    (e) => {
      const unknown = livenessVerdict({ ...e, lock: 'unknown', self: 'none' });
      const held = livenessVerdict({ ...e, lock: 'held', self: 'none' });
      expect(unknown).toEqual(held);
    },
  );

  test.prop([evidence, fc.integer({ min: 0, max: 1_000_000 })], { numRuns: 1_000 })(
    'monotone in the beat age: an older beat is never more alive',
    (e, more) => {
      const rank = (v: policy.LivenessVerdict) => (v.owner === 'alive' ? 1 : 0);
      const age = e.beatAgeMs ?? 0;
      const younger = livenessVerdict({ ...e, beatAgeMs: age });
      const older = livenessVerdict({ ...e, beatAgeMs: age + more });
      expect(rank(older)).toBeLessThanOrEqual(rank(younger));
    },
  );

  test.prop([evidence])('a dead verdict always names its reason', (e) => {
    const v = livenessVerdict(e);
    if (v.owner === 'dead') expect(typeof v.reason).toBe('string');
  });
});
