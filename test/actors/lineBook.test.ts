/**
 * The node's copy of the users' lines: later ticks win whatever order the
 * feed's reads and the tick's replies land in; positions follow the lines.
 */
import { describe, expect, it } from 'vitest';
import { LineBook } from '../../src/actors/lineBook.js';
import type { UserLine } from '../../src/db/tickTypes.js';

const line = (userId: string, queued: number, running = 0, headTurn = 0): UserLine => ({
  userId,
  headTurn,
  queued,
  running,
  joinSeq: userId.charCodeAt(0),
  maxRunning: 1,
  hasOverride: false,
});

describe('LineBook', () => {
  it('keeps a line known as of a later tick over an older one landing after it', () => {
    const book = new LineBook();
    book.apply([line('a', 3)], 1, 10);
    // A feed read as of tick 8 answers after the reply of tick 10.
    book.apply([line('a', 5), line('b', 1)], 4, 8);
    expect(book.line('a')?.queued).toBe(3);
    expect(book.line('b')?.queued).toBe(1);
    expect(book.running).toBe(1);
    // The same tick from the other path, and a later one, are taken.
    book.apply([line('a', 2)], 2, 10);
    expect([book.line('a')?.queued, book.running]).toEqual([2, 2]);
    book.apply([line('a', 0)], undefined, 11);
    // Emptied as of 11: an older copy cannot bring it back.
    book.apply([line('a', 4)], undefined, 9);
    expect(book.line('a')).toBeUndefined();
    expect(book.snapshot(20).queued).toBe(1);
  });

  it('applies as is without a tick, and reset forgets the ticks', () => {
    const book = new LineBook();
    book.apply([line('a', 1)], 0, 50);
    book.apply([line('a', 2)]);
    expect(book.line('a')?.queued).toBe(2);
    book.reset([line('a', 1, 0, 7)], 0);
    book.apply([line('a', 3, 0, 7)], 0, 1);
    expect(book.line('a')?.queued).toBe(3);
    // b (joinSeq 98) waits behind a's three turns from 7 and shares turn 7's round after a.
    book.apply([line('b', 1, 0, 7)], undefined, 2);
    expect(book.positionOf(7, 'b'.charCodeAt(0))).toBe(2);
  });

  it('says a user is at their cap from their line, live as running counts land, and tells listeners', async () => {
    const book = new LineBook();
    let told = 0;
    book.subscribe(() => {
      told += 1;
    });
    book.apply([line('a', 1, 1), line('b', 1, 0)], 1, 1);
    await Promise.resolve();
    expect([book.atCapOf('a'), book.atCapOf('b'), book.atCapOf('nobody')]).toEqual([
      { running: 1, max: 1 },
      null,
      null,
    ]);
    // A finish on any node: a's running count drops, nothing else of the line moves.
    book.apply([line('a', 1, 0)], 0, 2);
    await Promise.resolve();
    expect([book.atCapOf('a'), told]).toEqual([null, 2]);
    // An override of 3 while 2 run is room; lowered to 1 under the 2 running, over it.
    book.apply([{ ...line('a', 1, 2), maxRunning: 3, hasOverride: true }], 2, 3);
    expect(book.atCapOf('a')).toBeNull();
    book.apply([{ ...line('a', 1, 2), maxRunning: 1, hasOverride: true }], 2, 4);
    expect(book.atCapOf('a')).toEqual({ running: 2, max: 1 });
  });
});
