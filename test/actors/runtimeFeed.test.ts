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
  const pokes: number[] = [];
  const changes: Array<{ tick: number; sessions: number }> = [];
  let tick = 0;
  const f = new TickFeed({
    owner: 'me@boot1',
    clock: new TestClock(),
    pollMs: 250,
    notifications: {
      listen: async (_channel, onPayload) => {
        say = onPayload;
        return async () => {};
      },
    },
    currentTick: async () => tick,
    readChanges: async (since) => {
      reads.push(since);
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
  return { f, hear, reads, pokes, changes };
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
