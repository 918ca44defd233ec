/**
 * A running card showing another node's shared tail (src/actors/liveTailShare.ts):
 * shown only for the session and epoch the card runs at; replaced, not
 * appended to, when this node starts streaming the run itself (it adopted
 * it: its stream starts at the start or at the last lines written); and
 * replaced by the stored output once the run ended.
 */
import { expect, test } from 'vitest';
import * as board from '../../src/actors/runtimeBoard.js';
import type { Session } from '../../src/db/index.js';
import { noReads, runningRows } from '../support/boardRuns.js';

const at = (ms: number) => new Date(Date.UTC(2026, 0, 1) + ms);
const { task, session } = runningRows(1);
/** The run's row at `epoch` under `owner` (an adoption moves both). */
const running = (epoch: number, owner = 'a@1'): Session => ({
  ...session,
  epoch,
  owner,
  updatedAt: at(epoch),
});

test("shows another node's tail only at the card's session and epoch", async () => {
  const index = board.createBoardIndex(noReads);
  const told: string[][] = [];
  index.subscribe((c) => told.push(c.lastOutput));
  await index.apply(running(1), task);
  expect(index.runningSessions()).toEqual([{ sessionId: 'session_1', epoch: 1 }]);
  index.showTail('session_1', 0, ['stale epoch']);
  index.showTail('session_9', 1, ['another session']);
  expect(index.cards(null)[0]?.lastOutput).toEqual([]);
  index.showTail('session_1', 1, ['one', 'two']);
  expect(index.cards(null)[0]?.lastOutput).toEqual(['one', 'two']);
  expect(told.at(-1)).toEqual(['one', 'two']);
  index.close();
});

test('an adoption here starts the card over from its own stream: no line twice', async () => {
  const index = board.createBoardIndex(noReads);
  await index.apply(running(1), task);
  index.showTail('session_1', 1, ['one', 'two']);
  await index.apply(running(2, 'b@1'));
  expect(index.cards(null)[0]?.lastOutput).toEqual(['one', 'two']);
  // The adopter's stream: the last lines written so far, then more.
  index.appendOutput('session_1', 'two\nthree\n');
  expect(index.cards(null)[0]?.lastOutput).toEqual(['two', 'three']);
  index.appendOutput('session_1', 'four\n');
  expect(index.cards(null)[0]?.lastOutput).toEqual(['two', 'three', 'four']);
  index.close();
});

test('the stored output replaces the shared tail once the run ended', async () => {
  const index = board.createBoardIndex(noReads);
  index.subscribe(() => undefined);
  await index.apply(running(1), task);
  index.showTail('session_1', 1, ['one', 'two']);
  const done: Session = {
    ...running(1),
    status: 'succeeded',
    exitCode: 0,
    finishedAt: at(5),
    updatedAt: at(5),
  };
  await index.apply(
    done,
    { ...task, column: 'done', updatedAt: at(5) },
    { storedOutput: { tail: 'one\ntwo\nthree\n', whole: true } },
  );
  expect(index.cards(null)[0]?.lastOutput).toEqual(['one', 'two', 'three']);
  expect(index.runningSessions()).toEqual([]);
  index.close();
});
