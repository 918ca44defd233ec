/**
 * The board's line answers for the very session a card shows, read live:
 * its key, its position, and whether its user is at their cap, which only
 * a queued session can be.
 */
import { expect, test } from 'vitest';
import { BoardEntries } from '../../src/actors/runtimeBoardEntries.js';
import { boardLine } from '../../src/actors/runtimeBoardLine.js';
import type { BoardPositions } from '../../src/actors/runtimeBoardPositions.js';
import type { BoardCard } from '../../src/board/boardPort.js';
import { Listeners } from '../../src/supervisor/Listeners.js';
import { runningRows } from '../support/boardRuns.js';

test('at cap as the pool says for the queued session the card shows; never for another or a running one', () => {
  const entries = new BoardEntries(() => {});
  const { task, session } = runningRows(1);
  const queued = { ...session, status: 'queued' as const, claimedAt: null, turn: 4, joinSeq: 1 };
  entries.put(task, queued);
  const pool: BoardPositions = {
    placeOf: () => 3,
    atCapOf: (userId) => (userId === 'u1' ? { running: 2, max: 2 } : null),
    subscribe: () => () => {},
  };
  let caughtUp = 0;
  const line = boardLine(entries, pool, new Listeners<void>(() => {}), () => {
    caughtUp += 1;
  });
  const card = { taskId: task.id, sessionId: session.id, userId: 'u1' } as BoardCard;
  expect(line.keyOf(card)).toEqual({ turn: 4, joinSeq: 1 });
  expect(line.positionOf(card)).toBe(3);
  expect(line.atCapOf?.(card)).toEqual({ running: 2, max: 2 });
  // A card of an older attempt than the board holds: the line knows nothing of it.
  expect(line.atCapOf?.({ ...card, sessionId: 'session_0' })).toBeNull();
  expect(caughtUp).toBe(4);
  // Granted: it holds a runner, it waits on nothing.
  entries.put(task, { ...queued, status: 'running', epoch: queued.epoch + 1 });
  expect(line.atCapOf?.(card)).toBeNull();
});
