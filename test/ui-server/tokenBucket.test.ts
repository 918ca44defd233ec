import { fc, test } from '@fast-check/vitest';
import { expect } from 'vitest';
import * as mod from '../../src/ui-server/tokenBucket.js';
import { fullBucket, take } from '../../src/ui-server/tokenBucket.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/ui-server/tokenBucket.ts', import.meta.url), mod);

test.prop([
  fc.integer({ min: 1, max: 50 }),
  fc.integer({ min: 1, max: 20 }),
  fc.array(fc.integer({ min: 0, max: 500 }), { maxLength: 300 }),
])('never allows more than burst + rate × elapsed', (burst, perSecond, gaps) => {
  const limits = { burst, perSecond };
  let bucket = fullBucket(limits, 0);
  let now = 0;
  let allowed = 0;
  for (const gap of gaps) {
    now += gap;
    const r = take(bucket, limits, now);
    bucket = r.bucket;
    if (r.allowed) allowed += 1;
    expect(allowed).toBeLessThanOrEqual(burst + (now / 1000) * perSecond);
    expect(bucket.tokens).toBeGreaterThanOrEqual(0);
    expect(bucket.tokens).toBeLessThanOrEqual(burst);
  }
});
