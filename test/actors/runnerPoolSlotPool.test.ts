/**
 * The fair pool behind the runtime's SlotPool port: grants on a microtask,
 * fair order, DOWN-released slots, rows from the Reconciler.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { type AnyActorRef, assign, createActor, setup } from 'xstate';
import { createFairSlotPool } from '../../src/actors/runnerPoolSlotPool.js';

const waiterMachine = setup({
  types: { context: {} as { slots: string[] } },
  actions: {
    boom: () => {
      throw new Error('waiter crashed');
    },
  },
}).createMachine({
  context: { slots: [] },
  on: {
    runner_slot: {
      actions: assign({ slots: ({ context, event }) => [...context.slots, event.sessionId] }),
    },
    CRASH: { actions: 'boom' },
  },
});
const started: AnyActorRef[] = [];
function waiter() {
  const w = createActor(waiterMachine);
  w.subscribe({ error: () => {} });
  w.start();
  started.push(w);
  return w;
}
const slots = (w: ReturnType<typeof waiter>) => w.getSnapshot().context.slots;
const flush = async () => {
  for (let i = 0; i < 10; i++) await Promise.resolve();
};
afterEach(() => {
  for (const w of started.splice(0)) w.stop();
});

describe('createFairSlotPool', () => {
  it('grants on a microtask, in the fair order, and frees a crashed waiter slot', async () => {
    let t = 0;
    const pool = createFairSlotPool({ maxRunning: 2, defaultUserCap: 1 }, () => (t += 1000));
    await flush(); // boot: the empty store has loaded
    const [a1, a2, b1, c1] = [waiter(), waiter(), waiter(), waiter()];
    expect(pool.enqueue('ann', 'a1', a1)).toBe(0);
    expect(slots(a1)).toEqual([]); // not re-entrant: delivered after the call
    await flush();
    expect(slots(a1)).toEqual(['a1']);
    expect(pool.enqueue('ann', 'a2', a2)).toBe(1);
    expect(pool.enqueue('bob', 'b1', b1)).toBe(0);
    expect(pool.enqueue('cyd', 'c1', c1)).toBe(2);
    expect(pool.position('a2')).toBe(1);
    expect(pool.position('b1')).toBeNull();
    a1.send({ type: 'CRASH' });
    await flush();
    expect(slots(a2)).toEqual(['a2']);
    expect(pool.holders().sort()).toEqual(['a2', 'b1']);
    expect(pool.snapshot()).toEqual({
      maxRunning: 2,
      running: 2,
      queued: 1,
      users: [
        { userId: 'ann', running: 1, queued: 0, maxRunning: null },
        { userId: 'bob', running: 1, queued: 0, maxRunning: null },
        { userId: 'cyd', running: 0, queued: 1, maxRunning: null },
      ],
    });
    expect(pool.drainWaitSamples().length).toBe(3);
    expect(pool.drainWaitSamples()).toEqual([]);
    pool.close();
    pool.close();
  });

  it('a rebuild from rows keeps sessions whose waiter is alive, and counts running rows', async () => {
    const pool = createFairSlotPool({ maxRunning: 2, defaultUserCap: 2 }, () => 0);
    await flush();
    const w = waiter();
    pool.setUserCap('ann', 0);
    expect(pool.enqueue('ann', 'a1', w)).toBe(1);
    // Rows read before a1's row was written: a1 must not be lost.
    pool.rebuild({
      queued: [{ sessionId: 'x1', userId: 'xen' }],
      running: [{ sessionId: 'r1', userId: 'rob' }],
    });
    expect(pool.position('a1')).not.toBeNull();
    expect(pool.holders().sort()).toEqual(['r1', 'x1']);
    pool.setUserCap('ann', null);
    pool.release('r1');
    await flush();
    expect(slots(w)).toEqual(['a1']);
    pool.close();
  });

  it('supervised: the pool lives where `actorOf` says; while it is down calls are dropped and enqueue answers null', async () => {
    let current: AnyActorRef | undefined;
    const pool = createFairSlotPool(
      { maxRunning: 1, defaultUserCap: 1 },
      () => 0,
      undefined,
      undefined,
      () => current,
    );
    const w = waiter();
    expect(pool.enqueue('ann', 'a1', w)).toBeNull();
    pool.release('a1');
    pool.hold('ann', 'a1', w);
    pool.reload();
    expect(pool.position('a1')).toBeNull();
    expect(pool.snapshot()).toEqual({ maxRunning: 1, running: 0, queued: 0, users: [] });
    expect(pool.holders()).toEqual([]);
    current = createActor(pool.start.logic, { input: pool.start.input }).start();
    await flush();
    expect(pool.enqueue('ann', 'a1', w)).toBe(0);
    await flush();
    expect(slots(w)).toEqual(['a1']);
    current.stop();
    expect(pool.enqueue('ann', 'a2', waiter())).toBeNull();
    pool.close();
  });

  it('a reload while a grant is not yet claimed keeps it granted: the slot is not handed out twice', async () => {
    const rows = {
      queued: [
        { sessionId: 'a1', userId: 'ann', since: 1 },
        { sessionId: 'b1', userId: 'bob', since: 2 },
      ],
      running: [] as Array<{ sessionId: string; userId: string; since: number }>,
    };
    const store = {
      loadRows: async () => rows,
      loadCaps: async () => new Map<string, number>(),
      saveCap: async () => {},
    };
    const pool = createFairSlotPool({ maxRunning: 1, defaultUserCap: 1 }, () => 0, store);
    await flush();
    const [a, b] = [waiter(), waiter()];
    expect(pool.enqueue('ann', 'a1', a)).toBe(0);
    expect(pool.enqueue('bob', 'b1', b)).toBe(1);
    await flush();
    expect(slots(a)).toEqual(['a1']);
    // a1's claim is still in flight: its row says queued. A reload must not regrant.
    pool.reload();
    await flush();
    expect(pool.holders()).toEqual(['a1']);
    expect(pool.position('b1')).toBe(1);
    expect(slots(b)).toEqual([]);
    expect(slots(a)).toEqual(['a1']);
    pool.close();
  });
});
