import { expect, test } from 'vitest';
import * as mod from '../../src/common/maxTimerMs.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/common/maxTimerMs.ts', import.meta.url), mod);

test('MAX_TIMER_MS is the longest a timer waits: one more fires after 1 ms', async () => {
  const warnings: string[] = [];
  const onWarning = (w: Error) => warnings.push(w.name);
  process.on('warning', onWarning);
  try {
    clearTimeout(setTimeout(() => {}, mod.MAX_TIMER_MS));
    clearTimeout(setTimeout(() => {}, mod.MAX_TIMER_MS + 1));
    await new Promise((r) => setImmediate(r));
    expect(warnings).toEqual(['TimeoutOverflowWarning']);
  } finally {
    process.off('warning', onWarning);
  }
});
