import { expect, test } from 'vitest';
import * as entries from '../../src/actors/runtimeBoardEntries.js';
import { BoardEntries } from '../../src/actors/runtimeBoardEntries.js';
import type { Task } from '../../src/db/index.js';
import { queuedSession } from '../support/boardRuns.js';
import { runDocExamples } from '../support/docExamples.js';

const at = (ms: number) => new Date(Date.UTC(2026, 0, 1) + ms);
const task = (id: string, userId = 'u1'): Task => ({
  id,
  userId,
  title: id,
  spec: { image: 'i', command: ['c'] },
  column: 'queued',
  createdAt: at(0),
  updatedAt: at(0),
  timeLimitMs: null,
});
const queued = (taskId: string, turn: number, userId = 'u1') =>
  queuedSession({ id: `${taskId}_s`, taskId, userId, turn, joinSeq: 0 });

test('a card refuses an older row, and a later attempt remembers why the one before ended', () => {
  const e = new BoardEntries(() => {});
  const first = queued('t1', 0);
  const failed = {
    ...first,
    status: 'failed' as const,
    epoch: 1,
    failureReason: 'owner_lost',
    updatedAt: at(2),
  };
  expect(e.put(task('t1'), first)).toBe(true);
  expect(e.put(task('t1'), failed)).toBe(true);
  expect(e.put(task('t1'), first)).toBe(false);
  expect(e.get('t1')?.session.status).toBe('failed');
  const again = queuedSession({
    id: 't1_s2',
    taskId: 't1',
    attempt: 2,
    turn: 3,
    joinSeq: 0,
    updatedAt: at(3),
  });
  expect(e.put(task('t1'), again)).toBe(true);
  expect(e.get('t1')?.previous).toEqual({ attempt: 1, reason: 'owner_lost' });
  expect(e.ofSession('t1_s2')?.task.id).toBe('t1');
  expect(e.ofSession('t1_s')).toBeUndefined();
  expect([...e.queued]).toEqual(['t1']);
});

test("a queued cancel closes its user's line up behind it, and tells which cards moved", () => {
  const moved: string[][] = [];
  const e = new BoardEntries((ids) => moved.push(ids));
  for (const [id, turn, user] of [
    ['a', 0, 'u1'],
    ['b', 1, 'u1'],
    ['c', 2, 'u1'],
    ['d', 2, 'u2'],
  ] as const)
    e.put(task(id, user), queued(id, turn, user));
  const cancel = { ...queued('b', 1), status: 'cancelled' as const, updatedAt: at(1) };
  expect(e.put(task('b'), cancel)).toBe(true);
  expect(moved).toEqual([['c']]);
  expect(e.get('c')?.session.turn).toBe(1);
  expect(e.get('a')?.session.turn).toBe(0);
  expect(e.get('d')?.session.turn).toBe(2);
  expect(e.queued.has('b')).toBe(false);
  const unplaced = queuedSession({ id: 'e_s', taskId: 'e', turn: null, joinSeq: null });
  e.put(task('e'), unplaced);
  expect([...e.unkeyed]).toEqual(['e']);
});

test('a row read as of the cancel, or after it, is closed up already: the cancel moves it no further', () => {
  // Read as of tick 5: a, b, z at turns 0, 1, 2. Tick 7 cancelled b (z moved
  // up to 1); tick 8 queued c at turn 2; a read as of tick 9 carries c's row,
  // put first, and b's cancel.
  const moved: string[][] = [];
  const e = new BoardEntries((ids) => moved.push(ids));
  e.put(task('a'), queued('a', 0), 5);
  e.put(task('b'), queued('b', 1), 5);
  e.put(task('z'), queued('z', 2), 5);
  e.put(task('c'), queued('c', 2), 9);
  const cancel = { ...queued('b', 1), status: 'cancelled' as const, updatedAt: at(1) };
  expect(e.put(task('b'), cancel, 9)).toBe(true);
  expect(e.get('c')?.session.turn).toBe(2);
  // z was read before the cancel (tick 5): it moves.
  expect(e.get('z')?.session.turn).toBe(1);
  expect(moved).toEqual([['z']]);
});

test('a run granted and cancelled whose running row this board never saw closes nobody up', () => {
  const moved: string[][] = [];
  const e = new BoardEntries((ids) => moved.push(ids));
  e.put(task('a'), queued('a', 0), 5);
  e.put(task('b'), queued('b', 1), 5);
  // Tick 6 granted a (claimed, epoch 1), tick 7 cancelled it running: no turn moved.
  const cancelled = {
    ...queued('a', 0),
    status: 'cancelled' as const,
    epoch: 1,
    claimedAt: at(6),
    updatedAt: at(7),
  };
  expect(e.put(task('a'), cancelled, 7)).toBe(true);
  expect(e.get('b')?.session.turn).toBe(1);
  expect(moved).toEqual([]);
});

test('evict drops the cards of runs that ended before the cutoff, and only those', () => {
  const e = new BoardEntries(() => {});
  const ended = (taskId: string, status: 'succeeded' | 'failed' | 'cancelled', ms: number) => ({
    ...queued(taskId, 0),
    status,
    epoch: 1,
    finishedAt: at(ms),
    updatedAt: at(ms),
  });
  e.put(task('old'), ended('old', 'succeeded', 10));
  e.put(task('oldFail'), ended('oldFail', 'failed', 20));
  e.put(task('recent'), ended('recent', 'cancelled', 100));
  e.put(task('waiting'), queued('waiting', 1));
  // A final row of an older version, with no finishedAt: it ends by its last update.
  e.put(task('legacy'), {
    ...ended('legacy', 'succeeded', 0),
    finishedAt: null,
    updatedAt: at(30),
  });
  expect(e.evict(Date.parse(at(50).toISOString())).sort()).toEqual(['legacy', 'old', 'oldFail']);
  expect([...e.values()].map((x) => x.task.id).sort()).toEqual(['recent', 'waiting']);
  expect(e.ofSession('old_s')).toBeUndefined();
  expect(e.queued.has('waiting')).toBe(true);
  expect(e.evict(Date.parse(at(50).toISOString()))).toEqual([]);
  // A later row of an evicted task makes a card again (its rows were not pruned yet).
  expect(e.put(task('old'), ended('old', 'succeeded', 10))).toBe(true);
});

runDocExamples(new URL('../../src/actors/runtimeBoardEntries.ts', import.meta.url), entries);

test('a card keeps its task without the run spec, whatever the row it came with', () => {
  const e = new BoardEntries(() => {});
  const prompt = 'p'.repeat(32_000);
  const whole = { ...task('t1'), spec: { image: 'i', command: ['agent', prompt] } };
  e.put(whole, queued('t1', 0));
  expect(e.get('t1')?.task).toEqual({
    id: 't1',
    userId: 'u1',
    title: 't1',
    column: 'queued',
    createdAt: at(0),
    updatedAt: at(0),
    timeLimitMs: null,
  });
  expect('spec' in (e.get('t1')?.task ?? {})).toBe(false);
  // A later version of the task (a retry moved its column) replaces it, still without the spec.
  const moved = { ...whole, column: 'running', updatedAt: at(5) };
  e.put(moved, { ...queued('t1', 0), status: 'running', epoch: 1, updatedAt: at(5) });
  expect(e.get('t1')?.task.column).toBe('running');
  expect('spec' in (e.get('t1')?.task ?? {})).toBe(false);
});
