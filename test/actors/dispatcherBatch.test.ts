import { describe, expect, it } from 'vitest';
import * as batch from '../../src/actors/dispatcherBatch.js';
import { endsHold, runOp } from '../../src/actors/dispatcherBatch.js';
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

describe('runOp', () => {
  it('is true for ops about a run under way, false for those about queued sessions', () => {
    const op = (o: object) => o as TickOp;
    expect(runOp(op({ op: 'handle' }))).toBe(true);
    expect(runOp(op({ op: 'finish' }))).toBe(true);
    expect(runOp(op({ op: 'cancel', expected: { status: 'running', epoch: 1 } }))).toBe(true);
    expect(runOp(op({ op: 'cancel', expected: { status: 'queued', epoch: 0 } }))).toBe(false);
    for (const name of ['enqueue', 'retry', 'cap']) expect(runOp(op({ op: name }))).toBe(false);
  });
});
