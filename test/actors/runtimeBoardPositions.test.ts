import { expect, test } from 'vitest';
import { LineBook } from '../../src/actors/lineBook.js';
import type { BoardEntry } from '../../src/actors/runtimeBoardCard.js';
import * as positions from '../../src/actors/runtimeBoardPositions.js';
import { runningRows } from '../support/boardRuns.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/actors/runtimeBoardPositions.ts', import.meta.url), positions);

const queuedEntry = (
  n: number,
  over: Partial<BoardEntry['session']> = {},
  position: number | null = null,
): BoardEntry => {
  const { task, session } = runningRows(n);
  return {
    task,
    session: { ...session, status: 'queued', claimedAt: null, ...over },
    lines: [],
    partial: '',
    position,
    restored: false,
    previous: null,
  };
};

test("the pool's place first, then the one last shown, then the first-come rank (read once)", () => {
  const known = queuedEntry(1);
  const shown = queuedEntry(2, {}, 7);
  const unknown = queuedEntry(3);
  let reads = 0;
  const pool = {
    placeOf: (s: { id: string }) => (s.id === known.session.id ? 5 : null),
    atCapOf: () => null,
    subscribe: () => () => {},
  };
  const out = positions.positionsOf([known, shown, unknown, queuedEntry(4)], pool, () => {
    reads += 1;
    return [queuedEntry(4).session, unknown.session];
  });
  expect(out).toEqual(
    new Map([
      [known.task.id, 5],
      [shown.task.id, 7],
      // First come: task_3's session was enqueued before task_4's.
      [unknown.task.id, 1],
      ['task_4', 2],
    ]),
  );
  expect(reads).toBe(1);
  // No pool and nothing shown: the database's order alone; a session not among the queued is first.
  expect(positions.positionsOf([unknown], undefined, () => [])).toEqual(
    new Map([[unknown.task.id, 1]]),
  );
});

test('line positions: running is 0, a queued key its place in the lines, no key unknown', async () => {
  const lines = new LineBook();
  lines.reset(
    [
      {
        userId: 'u1',
        headTurn: 1,
        queued: 2,
        running: 0,
        joinSeq: 1,
        maxRunning: 2,
        hasOverride: false,
      },
      {
        userId: 'u2',
        headTurn: 1,
        queued: 1,
        running: 0,
        joinSeq: 2,
        maxRunning: 2,
        hasOverride: false,
      },
    ],
    0,
  );
  const p = positions.linePositions(lines);
  const { session } = runningRows(1);
  expect(p.placeOf(session)).toBe(0);
  const place = p.placeOf({ ...session, status: 'queued', turn: 2, joinSeq: 1 });
  expect(place).toBe(lines.positionOf(2, 1));
  expect(place).toBeGreaterThan(1);
  expect(p.placeOf({ ...session, status: 'queued', turn: null, joinSeq: null })).toBeNull();
  expect(p.placeOf({ ...session, status: 'succeeded' })).toBeNull();
  let told = 0;
  const off = p.subscribe(() => {
    told += 1;
  });
  lines.apply([], 1);
  await Promise.resolve();
  expect(told).toBe(1);
  off();
  // u1 runs none of their 2; u2 none either: neither waits on their cap.
  expect([p.atCapOf('u1'), p.atCapOf('u2')]).toEqual([null, null]);
  lines.apply([{ ...lines.line('u1')!, running: 2 }]);
  expect(p.atCapOf('u1')).toEqual({ running: 2, max: 2 });
});
