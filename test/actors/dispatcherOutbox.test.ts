/**
 * The outbox's two lanes: the runs' ops (handles, finishes, cancels of
 * running sessions) overtake the queue's, each lane keeps its order, a solo
 * op goes alone and first, and every op leaves exactly once.
 */
import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { type Entry, MAX_TICK_BYTES, runOp } from '../../src/actors/dispatcherBatch.js';
import * as outbox from '../../src/actors/dispatcherOutbox.js';
import { Outbox } from '../../src/actors/dispatcherOutbox.js';
import type { TickOp } from '../../src/db/tickTypes.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/actors/dispatcherOutbox.ts', import.meta.url), outbox);

let seq = 0;
const entry = (op: object, over: Partial<Entry> = {}): Entry => ({
  op: { ref: String(++seq), ...op } as TickOp,
  at: 0,
  solo: false,
  resolve: () => {},
  reject: () => {},
  ...over,
});
const handle = (over: Partial<Entry> = {}) => entry({ op: 'handle' }, over);
const enqueue = (over: Partial<Entry> = {}) => entry({ op: 'enqueue' }, over);
const finish = (chars: number) => entry({ op: 'finish', output: { text: 'x'.repeat(chars) } });
const filled = (...entries: Entry[]) => {
  const box = new Outbox();
  for (const e of entries) box.push(e);
  return box;
};

describe('Outbox', () => {
  it('takes up to maxOps, stops before a solo op, and sends a solo op alone', () => {
    const box = filled(handle(), handle(), handle(), handle({ solo: true }), handle());
    expect(box.take(2)).toHaveLength(2);
    expect(box.take(10)).toHaveLength(1);
    expect(box.soloNext()).toBe(true);
    expect(box.take(10).map((e) => e.solo)).toEqual([true]);
    expect(box.take(10)).toHaveLength(1);
    expect(box.take(10)).toEqual([]);
  });

  it('keeps a tick under MAX_TICK_BYTES, but always takes at least one op', () => {
    const box = filled(finish(MAX_TICK_BYTES - 100), finish(200), finish(MAX_TICK_BYTES * 2));
    expect(box.take(10)).toHaveLength(1);
    expect(box.take(10)).toHaveLength(1);
    expect(box.take(10)).toHaveLength(1);
  });

  it("a run's finish behind a burst of enqueues leaves with the next tick, not after the burst", () => {
    const burst = Array.from({ length: 1200 }, () => enqueue());
    const done = finish(10);
    const box = filled(...burst, done);
    const first = box.take(500);
    expect(first[0]).toBe(done);
    expect(first.slice(1)).toEqual(burst.slice(0, 499));
    expect(box.size).toBe(701);
  });

  it('a cancel of a queued session stays behind the enqueue it names; a running one overtakes', () => {
    const enq = enqueue();
    const cancelQueued = entry({ op: 'cancel', expected: { status: 'queued', epoch: 0 } });
    const cancelRunning = entry({ op: 'cancel', expected: { status: 'running', epoch: 1 } });
    const box = filled(enq, cancelQueued, cancelRunning);
    expect(box.take(1)).toEqual([cancelRunning]);
    expect(box.take(1)).toEqual([enq]);
    expect(box.take(1)).toEqual([cancelQueued]);
  });

  it("a solo op in the queue's lane goes next, however many runs' ops keep coming", () => {
    const box = filled(enqueue({ solo: true }), handle(), handle());
    const solo = box.take(10);
    expect(solo.map((e) => [e.op.op, e.solo])).toEqual([['enqueue', true]]);
  });

  it("a failed tick's ops go back to the head of their lanes in their order; expire and drain empty both", () => {
    const box = filled(handle(), enqueue());
    const sent = box.take(10);
    const later = [handle(), enqueue()];
    for (const e of later) box.push(e);
    box.unshift(sent);
    expect(box.take(10)).toEqual([sent[0], later[0], sent[1], later[1]]);
    const late = filled(
      handle({ at: 5 }),
      enqueue({ at: 5 }),
      handle({ at: 9 }),
      enqueue({ at: 9 }),
    );
    expect(late.expire(5).map((e) => e.at)).toEqual([5, 5]);
    expect(late.size).toBe(2);
    expect(late.drain().map((e) => e.at)).toEqual([9, 9]);
    expect(late.size).toBe(0);
  });

  test.prop(
    [
      fc.array(
        fc.oneof(
          fc.constantFrom('handle', 'finish', 'enqueue', 'retry', 'cap', 'cancelQ', 'cancelR'),
          fc.integer({ min: 1, max: 7 }),
        ),
        { maxLength: 200 },
      ),
    ],
    { numRuns: 200 },
  )(
    'every op leaves once; each lane in arrival order; no batch has a queued op before a run op',
    (steps) => {
      const box = new Outbox();
      const pushed: Entry[] = [];
      const taken: Entry[] = [];
      const take = (n: number) => {
        const batch = box.take(n);
        expect(batch.length).toBeLessThanOrEqual(n);
        const firstQueued = batch.findIndex((e) => !runOp(e.op));
        if (firstQueued >= 0)
          expect(batch.slice(firstQueued).every((e) => !runOp(e.op))).toBe(true);
        taken.push(...batch);
      };
      for (const s of steps) {
        if (typeof s === 'number') {
          take(s);
          continue;
        }
        const e =
          s === 'cancelQ' || s === 'cancelR'
            ? entry({ op: 'cancel', expected: { status: s === 'cancelQ' ? 'queued' : 'running' } })
            : entry(s === 'finish' ? { op: s, output: null } : { op: s });
        pushed.push(e);
        box.push(e);
      }
      while (box.size > 0) take(3);
      expect(new Set(taken).size).toBe(pushed.length);
      const lane = (list: Entry[], run: boolean) => list.filter((e) => runOp(e.op) === run);
      expect(lane(taken, true)).toEqual(lane(pushed, true));
      expect(lane(taken, false)).toEqual(lane(pushed, false));
    },
  );
});
