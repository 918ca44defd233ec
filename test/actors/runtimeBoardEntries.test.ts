import { expect, test } from 'vitest';
import { BoardEntries } from '../../src/actors/runtimeBoardEntries.js';
import type { Task } from '../../src/db/index.js';
import { queuedSession } from '../support/boardRuns.js';

const at = (ms: number) => new Date(Date.UTC(2026, 0, 1) + ms);
const task = (id: string, userId = 'u1'): Task => ({
  id,
  userId,
  title: id,
  spec: { image: 'i', command: ['c'] },
  column: 'queued',
  createdAt: at(0),
  updatedAt: at(0),
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
