import { describe, expect, it } from 'vitest';
import * as batch from '../../src/actors/dispatcherBatch.js';
import { endsHold } from '../../src/actors/dispatcherBatch.js';
import type { TickOp } from '../../src/db/tickTypes.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/actors/dispatcherBatch.ts', import.meta.url), batch);

describe('endsHold', () => {
  it('is true for a finish and for the cancel of a running session, false for the rest', () => {
    const op = (o: object) => o as TickOp;
    expect(endsHold(op({ op: 'finish', sessionId: 's1', epoch: 1 }))).toBe(true);
    expect(endsHold(op({ op: 'cancel', expected: { status: 'running', epoch: 1 } }))).toBe(true);
    expect(endsHold(op({ op: 'cancel', expected: { status: 'queued', epoch: 0 } }))).toBe(false);
    expect(endsHold(op({ op: 'handle', sessionId: 's1', epoch: 1 }))).toBe(false);
  });
});

describe('takeBatch', () => {
  const entry = (op: object, solo = false): batch.Entry => ({
    op: op as TickOp,
    at: 0,
    solo,
    resolve: () => {},
    reject: () => {},
  });
  const handle = () => entry({ op: 'handle' });
  const finish = (chars: number) => entry({ op: 'finish', output: { text: 'x'.repeat(chars) } });

  it('takes up to maxOps, stops before a solo op, and sends a solo op alone', () => {
    const pending = [handle(), handle(), handle(), entry({ op: 'handle' }, true), handle()];
    expect(batch.takeBatch(pending, 2)).toHaveLength(2);
    expect(batch.takeBatch(pending, 10)).toHaveLength(1);
    const solo = batch.takeBatch(pending, 10);
    expect(solo.map((e) => e.solo)).toEqual([true]);
    expect(batch.takeBatch(pending, 10)).toHaveLength(1);
    expect(batch.takeBatch(pending, 10)).toEqual([]);
  });

  it('keeps a tick under MAX_TICK_BYTES, but always takes at least one op', () => {
    const big = batch.MAX_TICK_BYTES - 100;
    const pending = [finish(big), finish(200), finish(batch.MAX_TICK_BYTES * 2)];
    expect(batch.takeBatch(pending, 10)).toHaveLength(1);
    expect(batch.takeBatch(pending, 10)).toHaveLength(1);
    expect(batch.takeBatch(pending, 10)).toHaveLength(1);
  });
});
