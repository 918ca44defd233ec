/**
 * The two halves of sharing a running card's output between nodes, on a
 * virtual clock with the store's calls recorded: the writer writes a tail
 * only when it changed, at most once a period, nothing for a run that ended
 * within its first period, deletes its row when the run leaves the node, and
 * tells an outage once; the reader reads only while the board is watched,
 * asks past what it has, and shows what came.
 */
import { expect, it } from 'vitest';
import * as share from '../../src/actors/liveTailShare.js';
import type { KnownTail, LiveTail, LiveTailsWrite } from '../../src/db/index.js';
import { TestClock } from '../../src/testing/TestClock.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/actors/liveTailShare.ts', import.meta.url), share);
const { LiveTailReader, LiveTailWriter } = share;

const S1 = `ses_${'1'.repeat(32)}`;
const S2 = `ses_${'2'.repeat(32)}`;
const flush = () => new Promise<void>((r) => setImmediate(r));

/** Moves the clock by `ms`, firing what falls due, settling the promises between. */
async function advance(clock: TestClock, ms: number) {
  const to = clock.now() + ms;
  for (;;) {
    await flush();
    const due = clock.nextDue(to);
    if (due === null) break;
    clock.fireNext(due);
  }
  clock.fireNext(to);
  await flush();
}

function writer(
  held: Map<string, number>,
  fail?: () => boolean,
  watched: () => boolean = () => true,
) {
  const clock = new TestClock();
  const writes: LiveTailsWrite[] = [];
  const errors: unknown[] = [];
  const w = new LiveTailWriter({
    owner: 'n@1',
    clock,
    everyMs: 1_000,
    heldEpoch: (id) => held.get(id),
    write: async (input) => {
      if (fail?.()) throw new Error('store down');
      writes.push(input);
      const yes = watched();
      return { written: yes ? input.tails.map((t) => t.sessionId) : [], watched: yes };
    },
    onError: (e) => errors.push(e),
    track: (p) => p,
  });
  return { clock, writes, errors, w };
}

it('writes a changed tail once a period, in one statement for every session, and nothing when unchanged', async () => {
  const held = new Map([
    [S1, 3],
    [S2, 1],
  ]);
  const { clock, writes, w } = writer(held);
  w.output(S1, 'one\ntw');
  w.output(S2, 'x\n');
  w.output(S1, 'o\n');
  await advance(clock, 999);
  expect(writes).toEqual([]);
  await advance(clock, 1);
  expect(writes).toEqual([
    {
      owner: 'n@1',
      tails: [
        { sessionId: S1, epoch: 3, lines: ['one', 'two'] },
        { sessionId: S2, epoch: 1, lines: ['x'] },
      ],
      ended: [],
    },
  ]);
  await advance(clock, 5_000);
  expect(writes).toHaveLength(1);
  w.output(S2, 'partial');
  await advance(clock, 1_000);
  expect(writes[1]?.tails).toEqual([{ sessionId: S2, epoch: 1, lines: ['x', 'partial'] }]);
});

it('writes nothing for a run that ended within its first period, and deletes the row of one that ended after', async () => {
  const held = new Map([[S1, 1]]);
  const { clock, writes, w } = writer(held);
  w.output(S1, 'quick\n');
  held.delete(S1);
  await advance(clock, 3_000);
  expect(writes).toEqual([]);
  expect(w.size()).toBe(0);
  expect(clock.pending()).toBe(0);

  held.set(S2, 2);
  w.output(S2, 'long\n');
  await advance(clock, 1_000);
  expect(writes).toHaveLength(1);
  held.delete(S2);
  await advance(clock, 1_000);
  expect(writes[1]).toEqual({ owner: 'n@1', tails: [], ended: [S2] });
  await advance(clock, 5_000);
  expect(writes).toHaveLength(2);
  expect(clock.pending()).toBe(0);
});

it('tells an outage once, and writes what is held when the store is back', async () => {
  const held = new Map([[S1, 1]]);
  let down = true;
  const { clock, writes, errors, w } = writer(held, () => down);
  w.output(S1, 'a\n');
  await advance(clock, 3_000);
  expect(errors).toHaveLength(1);
  expect(writes).toEqual([]);
  down = false;
  await advance(clock, 1_000);
  expect(writes.at(-1)?.tails).toEqual([{ sessionId: S1, epoch: 1, lines: ['a'] }]);
  expect(errors).toHaveLength(1);
});

it('stops: no timer left, output after it kept nowhere', async () => {
  const held = new Map([[S1, 1]]);
  const { clock, writes, w } = writer(held);
  w.output(S1, 'a\n');
  w.stop();
  w.output(S1, 'b\n');
  await advance(clock, 5_000);
  expect(writes).toEqual([]);
  expect(clock.pending()).toBe(0);
});

function reader(remote: () => { sessionId: string; epoch: number }[]) {
  const clock = new TestClock();
  const reads: KnownTail[][] = [];
  const shown: LiveTail[] = [];
  const rows = new Map<string, LiveTail>();
  const r = new LiveTailReader({
    clock,
    everyMs: 1_000,
    remote,
    read: async (known) => {
      reads.push(known);
      return known.flatMap((k) => {
        const t = rows.get(k.sessionId);
        return t !== undefined && t.epoch === k.epoch && t.seq > k.seq ? [t] : [];
      });
    },
    show: (t) => shown.push(t),
    onError: () => undefined,
    track: (p) => p,
  });
  return { clock, reads, shown, rows, r };
}

it('reads only while watched, past the seq it has of each session, and shows what is newer', async () => {
  let remote = [{ sessionId: S1, epoch: 2 }];
  const { clock, reads, shown, rows, r } = reader(() => remote);
  rows.set(S1, { sessionId: S1, epoch: 2, seq: 7, lines: ['hi'] });
  await advance(clock, 3_000);
  expect(reads).toEqual([]);
  expect(clock.pending()).toBe(0);
  r.setWatched(true);
  await advance(clock, 1_000);
  expect(reads.at(-1)).toEqual([{ sessionId: S1, epoch: 2, seq: 0 }]);
  expect(shown.map((t) => t.lines)).toEqual([['hi']]);
  await advance(clock, 1_000);
  expect(reads.at(-1)).toEqual([{ sessionId: S1, epoch: 2, seq: 7 }]);
  expect(shown).toHaveLength(1);
  // Adopted at a later epoch: asked from the start of that epoch's rows.
  remote = [{ sessionId: S1, epoch: 3 }];
  await advance(clock, 1_000);
  expect(reads.at(-1)).toEqual([{ sessionId: S1, epoch: 3, seq: 0 }]);
  // Nothing running elsewhere: nothing read.
  remote = [];
  const before = reads.length;
  await advance(clock, 3_000);
  expect(reads).toHaveLength(before);
  // Nobody watches: no timer.
  r.setWatched(false);
  expect(clock.pending()).toBe(0);
  r.setWatched(true);
  r.stop();
  expect(clock.pending()).toBe(0);
});

it('while no other board is watched, keeps each tail for the first write once one is', async () => {
  const held = new Map([[S1, 1]]);
  let watched = false;
  const { clock, writes, w } = writer(held, undefined, () => watched);
  w.output(S1, 'quiet now\n');
  await advance(clock, 1_000);
  expect(writes).toHaveLength(1);
  // Nothing new was printed, yet the tail is sent again: nobody had it.
  await advance(clock, 1_000);
  expect(writes).toHaveLength(2);
  watched = true;
  await advance(clock, 1_000);
  expect(writes.at(-1)?.tails).toEqual([{ sessionId: S1, epoch: 1, lines: ['quiet now'] }]);
  // Written: not again until it changes.
  await advance(clock, 3_000);
  expect(writes).toHaveLength(3);
  held.delete(S1);
  await advance(clock, 1_000);
  expect(writes.at(-1)).toEqual({ owner: 'n@1', tails: [], ended: [S1] });
  w.stop();
});
