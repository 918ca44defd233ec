import { describe, expect, it } from 'vitest';
import { newId } from '../../src/db/ids.js';
import * as tickInput from '../../src/db/tickInput.js';
import { tickPayload } from '../../src/db/tickInput.js';
import { runDocExamples } from '../support/docExamples.js';
import { finishOp, handleOp, tickHead } from './tickFixtures.js';

runDocExamples(new URL('../../src/db/tickInput.ts', import.meta.url), tickInput);

describe('tickPayload folds a lone handle into the finish of its run', () => {
  // The tick suites' builders, with the ref this test names.
  const handle = (sessionId: string, epoch: number, ref: string) => ({
    ...handleOp(sessionId, epoch),
    ref,
    handle: `h-${ref}`,
  });
  const finish = (sessionId: string, epoch: number, ref: string) => ({
    ...finishOp(sessionId, epoch, { output: null }),
    ref,
  });
  it('same run, same epoch: the finish carries the handle and its ref, the handle op leaves', () => {
    const s = newId('session');
    const p = tickPayload(tickHead([handle(s, 1, 'h1'), finish(s, 1, 'f1')]));
    expect(p.handles).toEqual([]);
    expect(p.finishes).toMatchObject([
      { ref: 'f1', h_handle: 'h-h1', h_backend: 'simulated', h_ref: 'h1', h_ord: 0 },
    ]);
  });
  it('another epoch, or two handles of one run, stay as they are', () => {
    const s = newId('session');
    const t = newId('session');
    const p = tickPayload(
      tickHead([
        handle(s, 1, 'h1'),
        finish(s, 2, 'f1'),
        handle(t, 1, 'h2'),
        handle(t, 1, 'h3'),
        finish(t, 1, 'f2'),
      ]),
    );
    expect(p.handles.map((h) => h.ref)).toEqual(['h1', 'h2', 'h3']);
    expect(p.finishes.some((f) => 'h_handle' in f)).toBe(false);
  });
});
