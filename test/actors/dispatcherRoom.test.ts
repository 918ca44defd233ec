/**
 * The room a tick asks for and whether the next one asks again. The
 * dispatcher's own behaviour over them (a freed slot is asked for by the
 * next tick) is test/actors/dispatcher.test.ts.
 */
import { expect, test } from 'vitest';
import * as room from '../../src/actors/dispatcherRoom.js';
import { asksAgain, freedBy, roomToAsk } from '../../src/actors/dispatcherRoom.js';
import type { TickOp } from '../../src/db/tickTypes.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/actors/dispatcherRoom.ts', import.meta.url), room);

const op = (o: object) => o as TickOp;

test('roomToAsk never asks for less than nothing, however much is reserved', () => {
  expect(roomToAsk({ localMax: 2, held: 3, reserved: 5 }, 1)).toBe(0);
  expect(roomToAsk({ localMax: 0, held: 0, reserved: 0 })).toBe(0);
});

test('freedBy counts only the holds this node has, and only ops that end one', () => {
  const held = new Set(['s1', 's2']);
  const ops = [
    op({ op: 'finish', sessionId: 's1' }),
    op({ op: 'cancel', sessionId: 's2', expected: { status: 'queued' } }),
    op({ op: 'cancel', sessionId: 's2', expected: { status: 'running' } }),
    op({ op: 'finish', sessionId: 's3' }),
    op({ op: 'handle', sessionId: 's1' }),
  ];
  expect(freedBy(ops, held)).toBe(2);
});

test('asksAgain: every kind of new work, and a tick granted less than it asked for', () => {
  for (const kind of ['enqueue', 'retry', 'cap', 'finish'])
    expect(asksAgain({ want: 0, ops: [op({ op: kind })] }, 0)).toBe(true);
  // It asked and found less than it wanted: nothing more is there.
  expect(asksAgain({ want: 3, ops: [op({ op: 'enqueue' })] }, 2)).toBe(false);
});
