/**
 * The tick feed (src/actors/runtimeFeed.ts): every newer tick another node
 * announces is read; the dispatcher is poked only for one after which a
 * grant is possible (`grantable`), or whose payload does not say (a node
 * of an older version, a repair, a poll).
 */
import { describe, expect, it } from 'vitest';
import { TickFeed } from '../../src/actors/runtimeFeed.js';
import type { Session, Task, TickResult } from '../../src/db/index.js';
import { TestClock } from '../../src/testing/TestClock.js';

function feed() {
  let say: (payload: string) => void = () => {};
  const reads: number[] = [];
  const skips: number[][] = [];
  const pokes: number[] = [];
  const changes: Array<{ tick: number; sessions: number }> = [];
  let tick = 0;
  const polls: number[] = [];
  const clock = new TestClock(0);
  const f = new TickFeed({
    owner: 'me@boot1',
    clock,
    pollMs: 250,
    notifications: {
      listen: async (_channel, onPayload) => {
        say = onPayload;
        return async () => {};
      },
    },
    currentTick: async () => {
      polls.push(clock.now());
      return tick;
    },
    readChanges: async (since, skipTicks) => {
      reads.push(since);
      skips.push([...skipTicks]);
      return { tick, sessions: [], lines: [] };
    },
    onChanges: (c) => changes.push({ tick: c.tick, sessions: c.sessions.length }),
    onNewerTick: (t) => pokes.push(t),
    onError: (e) => {
      throw e;
    },
    track: (w) => w,
  });
  const hear = async (payload: string, t: number) => {
    tick = t;
    say(payload);
    for (let i = 0; i < 5; i++) await Promise.resolve();
  };
  /** Fires every timer due in the next `ms`, letting each poll's promise settle. */
  const advance = async (ms: number) => {
    const at = clock.now() + ms;
    while (clock.fireNext(at)) for (let i = 0; i < 10; i++) await Promise.resolve();
  };
  return { f, hear, reads, skips, pokes, changes, polls, clock, advance };
}

describe('TickFeed', () => {
  it('reads every newer tick of another node, and pokes only when a grant may follow', async () => {
    const { f, hear, reads, pokes } = feed();
    await f.start(0);
    await hear('1 other@boot2 full', 1);
    expect(reads).toEqual([0]);
    expect(pokes).toEqual([]);
    await hear('2 other@boot2 grantable', 2);
    expect(reads).toEqual([0, 1]);
    expect(pokes).toEqual([2]);
    // An older node's payload has no flag: poke, to be safe.
    await hear('3 old@boot3', 3);
    expect(pokes).toEqual([2, 3]);
    // A repair's has no owner either.
    await hear('4', 4);
    expect(pokes).toEqual([2, 3, 4]);
    // Its own ticks came with their replies: nothing to do.
    await hear('5 me@boot1 grantable', 5);
    expect(reads).toEqual([0, 1, 2, 3]);
    expect(pokes).toEqual([2, 3, 4]);
    f.stop();
  });

  it("reads nothing its own tick's reply brings: a tick heard meanwhile rides that reply", async () => {
    const { f, hear, reads, changes } = feed();
    await f.start(0);
    const since = f.sending();
    expect(since).toBe(0);
    await hear('1 other@boot2 grantable', 1);
    await hear('2 other@boot2 full', 2);
    expect(reads).toEqual([]);
    // Our tick came after both: its reply carries what they changed.
    f.own(reply(3, [changed()]), since);
    expect(changes).toEqual([{ tick: 3, sessions: 1 }]);
    expect(reads).toEqual([]);
    expect(f.seenTick()).toBe(3);
    // Nothing on its way: a tick heard is read.
    await hear('4 other@boot2 full', 4);
    expect(reads).toEqual([3]);
    f.stop();
  });

  it('a reply landed before it is handled: the next tick says it saw it; own hands it on once', async () => {
    const { f, hear, reads, changes } = feed();
    await f.start(0);
    const since = f.sending();
    const r = reply(3, [changed()]);
    // The dispatcher sends its next tick between the two.
    f.landed(r);
    expect(f.seenTick()).toBe(3);
    expect(f.sending()).toBe(3);
    f.own(r, since);
    f.landed(r);
    expect(changes).toEqual([{ tick: 3, sessions: 1 }]);
    // Counted once: the second tick is still on its way, so a tick heard rides its reply.
    await hear('5 other@boot2 full', 5);
    expect(reads).toEqual([]);
    f.stop();
  });

  it('a reply with its changes deferred covers nothing: they are read, and the next tick says the same since', async () => {
    const { f, hear, reads, skips, changes } = feed();
    await f.start(0);
    await hear('1 other@boot2 full', 1);
    expect(reads).toEqual([0]);
    const since = f.sending();
    await hear('2 other@boot2 full', 2);
    const r: TickResult = { ...reply(3, []), changesDeferred: true };
    f.landed(r);
    // Sent before the reply is handled, the next tick still says 1.
    expect(f.seenTick()).toBe(1);
    const next = f.sending();
    expect(next).toBe(1);
    expect(reads).toEqual([0]);
    // Our own tick's NOTIFY is skipped (the read below answers as of it).
    await hear('3 me@boot1 full', 3);
    expect(reads).toEqual([0]);
    f.own(r, since);
    // Read at once, from 1 (through our tick 3), while the next tick is out;
    // the sessions our tick 3 changed last came with its reply: skipped.
    expect(reads).toEqual([0, 1]);
    expect(skips).toEqual([[], [3]]);
    for (let i = 0; i < 5; i++) await Promise.resolve();
    expect(f.seenTick()).toBe(3);
    expect(changes).toEqual([
      { tick: 1, sessions: 0 },
      { tick: 3, sessions: 0 },
    ]);
    // That tick's reply rode normally: it covers up to its own.
    f.own(reply(4, [changed()]), next);
    expect(f.seenTick()).toBe(4);
    expect(reads).toEqual([0, 1]);
    f.stop();
  });

  it('reads a tick its reply did not cover, and what a failed tick left', async () => {
    const { f, hear, reads } = feed();
    await f.start(0);
    let since = f.sending();
    await hear('2 other@boot2 full', 2);
    // Ours was tick 1: tick 2 committed after it, so it is read now.
    f.own(reply(1, []), since);
    expect(reads).toEqual([1]);
    since = f.sending();
    await hear('5 other@boot2 full', 5);
    expect(reads).toEqual([1]);
    f.ownFailed();
    await Promise.resolve();
    expect(reads).toEqual([1, 2]);
    f.stop();
  });
});

describe('TickFeed polls', () => {
  it('polls a period after its last own reply: a node that ticks more often sends no poll', async () => {
    const { f, polls, advance } = feed();
    await f.start(0);
    await advance(250);
    expect(polls).toEqual([250]);
    // Replies every 100 ms: each covered every tick up to its own.
    for (let t = 1; t <= 10; t++) {
      const since = f.sending();
      await advance(100);
      f.own(reply(t, []), since);
    }
    expect(polls).toEqual([250]);
    // Quiet since the last reply (at 1,250): the next poll is a period after it.
    await advance(249);
    expect(polls).toEqual([250]);
    await advance(1);
    expect(polls).toEqual([250, 1_500]);
    // A failed tick covered nothing: it does not hold the poll back.
    f.sending();
    f.ownFailed();
    await advance(250);
    expect(polls).toEqual([250, 1_500, 1_750]);
    f.stop();
  });
});

function reply(tick: number, changes: TickResult['changes'] & object): TickResult {
  return {
    tick,
    changed: true,
    outcomes: [],
    granted: [],
    running: 0,
    lines: [],
    ...(changes.length > 0 ? { changes } : {}),
  };
}

function changed(): { session: Session; task: Task } {
  return { session: {} as Session, task: {} as Task };
}
