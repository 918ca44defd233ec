/**
 * The board's output path over machines/outputTail.ts: a huge line is shown
 * cut while it grows, becomes the card's last line when the run ends, and a
 * finished card keeps nothing more than its lines (retained size, not time).
 */
import { expect, test } from 'vitest';
import { CARD_LINE_CHARS, createBoardIndex } from '../../src/actors/runtimeBoard.js';
import { memoryAfterGc, noReads, runningRows, succeededRows } from '../support/boardRuns.js';

const running = (n: number) => runningRows(n).session;
const done = (n: number) => succeededRows(n).session;
const taskOf = (n: number) => runningRows(n).task;
const cut = `${'x'.repeat(CARD_LINE_CHARS - 1)}…`;

test('a line with no newline shows cut while it grows, and is the last line once the run ends', async () => {
  const index = createBoardIndex(noReads);
  await index.apply(running(1), taskOf(1));
  index.appendOutput('session_1', 'first\nxx');
  for (let i = 0; i < 100; i++) index.appendOutput('session_1', 'x'.repeat(10_000));
  expect(index.cards(null)[0]?.lastOutput).toEqual(['first', cut]);
  await index.apply(done(1), succeededRows(1).task, { outputShown: true });
  expect(index.cards(null)[0]?.lastOutput).toEqual(['first', cut]);
  index.close();
});

test('a retry starts with no output; a short last line is shown whole', async () => {
  const index = createBoardIndex(noReads);
  await index.apply(running(1), taskOf(1));
  index.appendOutput('session_1', 'one\nno newline');
  await index.apply(done(1), undefined, { outputShown: true });
  expect(index.cards(null)[0]?.lastOutput).toEqual(['one', 'no newline']);
  await index.apply({
    ...running(1),
    id: 'session_1b',
    attempt: 2,
    updatedAt: new Date(Date.UTC(2026, 0, 2)),
  });
  expect(index.cards(null)[0]?.lastOutput).toEqual([]);
  index.close();
});

test('finished runs of 20 MB single lines keep no more than their cards', async () => {
  const heap = () => memoryAfterGc().heapUsed;
  const index = createBoardIndex(noReads);
  const RUNS = 10;
  const before = heap();
  for (let n = 1; n <= RUNS; n++) {
    await index.apply(running(n), taskOf(n));
    // One huge chunk (a slice of it kept as a view would pin all of it), then more.
    index.appendOutput(`session_${n}`, 'y'.repeat(10_000_000));
    for (let i = 0; i < 10; i++) index.appendOutput(`session_${n}`, 'x'.repeat(1_000_000));
    await index.apply(done(n), succeededRows(n).task, { outputShown: true });
  }
  const grown = heap() - before;
  expect(index.cards(null)).toHaveLength(RUNS);
  for (const card of index.cards(null)) {
    expect(card.lastOutput).toEqual([`${'y'.repeat(CARD_LINE_CHARS - 1)}…`]);
  }
  // Before: each finished card kept its whole 20 MB line (200 MB here).
  expect(grown).toBeLessThan(4_000_000);
  index.close();
});

test('a NUL shows as U+FFFD while the run goes, as the stored output will have it', async () => {
  const index = createBoardIndex(noReads);
  await index.apply(running(1), taskOf(1));
  index.appendOutput('session_1', 'a\u0000b\nc\u0000');
  expect(index.cards(null)[0]?.lastOutput).toEqual(['a\uFFFDb', 'c\uFFFD']);
  index.close();
});
