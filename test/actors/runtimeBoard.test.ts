import { expect, test } from 'vitest';
import * as board from '../../src/actors/runtimeBoard.js';
import { RuntimeListenerError } from '../../src/actors/runtimeListenerError.js';
import type { Session, Task } from '../../src/db/index.js';
import { noReads, queuedSession } from '../support/boardRuns.js';

const at = (ms: number) => new Date(Date.UTC(2026, 0, 1) + ms);
const task: Task = {
  id: 'task_1',
  userId: 'u1',
  title: 't',
  spec: { image: 'i', command: ['c'] },
  column: 'queued',
  createdAt: at(0),
  updatedAt: at(0),
  timeLimitMs: null,
};
const row = (over: Partial<Session>): Session => queuedSession({ taskId: task.id, ...over });

test('apply shows the rows a write returned, with no read, and never an older row after a newer one', async () => {
  const index = board.createBoardIndex(noReads);
  const seen: string[] = [];
  index.subscribe((c) => seen.push(c.status));
  await index.apply(row({}), task);
  const running = row({
    status: 'running',
    epoch: 1,
    owner: 'n',
    claimedAt: at(1),
    updatedAt: at(1),
  });
  await index.apply(running);
  // A late answer carrying the queued row must not move the card back.
  await index.apply(row({}), task);
  expect(index.cards(null)[0]?.status).toBe('running');
  index.appendOutput('session_1', 'hi\n');
  const done = { ...running, status: 'succeeded' as const, exitCode: 0, updatedAt: at(2) };
  await index.apply(done, { ...task, column: 'done', updatedAt: at(2) }, { outputShown: true });
  await index.apply(running);
  const [card] = index.cards(null);
  expect(card?.column).toBe('done');
  expect(card?.lastOutput).toEqual(['hi']);
  expect(seen).toEqual(['queued', 'running', 'running', 'succeeded']);
  index.close();
});

test("a listener that throws is reported to the board's onError: the other listeners still hear, and nothing escapes", async () => {
  const errors: unknown[] = [];
  const index = board.createBoardIndex(noReads, undefined, undefined, (e) => errors.push(e));
  index.subscribe(() => {
    throw new Error('listener bug');
  });
  const seen: string[] = [];
  index.subscribe((c) => seen.push(`${c.taskId}:${c.status}`));
  const second: Task = { ...task, id: 'task_2', createdAt: at(1) };
  await index.apply(row({ id: 's1', turn: 0, joinSeq: 0 }), task);
  await index.apply(row({ id: 's2', taskId: 'task_2', turn: 1, joinSeq: 0 }), second);
  // A queued cancel closes the line up behind it: the card it moved is told on a microtask.
  const cancel = row({ id: 's1', turn: 0, joinSeq: 0, status: 'cancelled', updatedAt: at(3) });
  await index.apply(cancel, undefined, { storedOutput: null });
  await new Promise((resolve) => setImmediate(resolve));
  expect(seen).toEqual(['task_1:queued', 'task_2:queued', 'task_2:queued', 'task_1:cancelled']);
  expect(errors).toHaveLength(4);
  for (const e of errors)
    expect(e).toMatchObject({
      code: 'RUNTIME_LISTENER_FAILED',
      listener: 'board',
      cause: new Error('listener bug'),
    });
  index.close();
});

test("a line listener that throws is reported to the board's onError, and the other line listeners still hear", async () => {
  const errors: unknown[] = [];
  let linesChanged = () => {};
  const pool = {
    placeOf: () => 1,
    atCapOf: () => null,
    subscribe: (listener: () => void) => {
      linesChanged = listener;
      return () => {};
    },
  };
  const index = board.createBoardIndex(noReads, pool, undefined, (e) => errors.push(e));
  index.line.subscribe(() => {
    throw new Error('line listener bug');
  });
  let heard = 0;
  index.line.subscribe(() => {
    heard += 1;
  });
  linesChanged();
  await Promise.resolve();
  expect(heard).toBe(1);
  expect(errors).toHaveLength(1);
  expect(errors[0]).toBeInstanceOf(RuntimeListenerError);
  expect(errors[0]).toMatchObject({ listener: 'line', cause: new Error('line listener bug') });
  index.close();
});
