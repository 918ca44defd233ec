/**
 * The RunnerPool actor over an in-memory store: boot, grants to real waiter
 * actors, DOWN-released slots and queue entries (in the same step as the next
 * grant), caps that survive a restart, rebuilds racing enqueues.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { type AnyActorRef, assign, createActor, setup } from 'xstate';
import type { PoolRows, PoolStore, RunnerPoolContext } from '../../src/actors/runnerPool.js';
import * as runnerPool from '../../src/actors/runnerPool.js';
import { type RunnerPool, startRunnerPool } from '../../src/actors/runnerPoolClient.js';
import type { PoolRow } from '../../src/machines/poolIndex.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/actors/runnerPool.ts', import.meta.url), runnerPool);

/** A store whose loads resolve when the test says so. */
class FakeStore implements PoolStore {
  rows = new Map<string, PoolRow & { status: 'queued' | 'running' | 'done' }>();
  caps = new Map<string, number>();
  loads = 0;
  private gate: Promise<void> | undefined;
  private open: (() => void) | undefined;

  hold(): void {
    this.gate = new Promise((resolve) => {
      this.open = resolve;
    });
  }
  release(): void {
    this.open?.();
    this.gate = undefined;
  }
  queue(sessionId: string, userId: string, since: number): void {
    this.rows.set(sessionId, { sessionId, userId, since, status: 'queued' });
  }
  async loadRows(): Promise<PoolRows> {
    this.loads += 1;
    const snapshot = [...this.rows.values()].map((r) => ({ ...r }));
    await this.gate;
    return {
      queued: snapshot.filter((r) => r.status === 'queued'),
      running: snapshot.filter((r) => r.status === 'running'),
    };
  }
  async loadCaps(): Promise<Map<string, number>> {
    return new Map(this.caps);
  }
  async saveCap(userId: string, max: number | null): Promise<void> {
    if (max === null) this.caps.delete(userId);
    else this.caps.set(userId, max);
  }
}

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
  // Observe errors so a crash is an exit, not an uncaught exception.
  w.subscribe({ error: () => {} });
  w.start();
  started.push(w);
  return w;
}
const slotsOf = (w: ReturnType<typeof waiter>) => w.getSnapshot().context.slots;
/** DOWN lands on a microtask, as a message in a mailbox; let it land. */
const flush = async () => {
  for (let i = 0; i < 5; i++) await Promise.resolve();
};
async function booted(pool: RunnerPool): Promise<void> {
  for (let i = 0; i < 20 && !pool.ready; i++) await flush();
  expect(pool.ready).toBe(true);
}

let clock = 1_000;
const now = () => clock++;

function start(store: FakeStore, globalMax = 2, perUserMax = 1) {
  const { pool, actor: raw } = startRunnerPool(store, { caps: { globalMax, perUserMax }, now });
  const stop = raw.stop.bind(raw);
  const actor = Object.assign(raw, {
    stop: () => {
      pool.close();
      return stop();
    },
  });
  // Every snapshot the pool ever publishes: never an idle slot while someone eligible waits.
  actor.subscribe((snap) => {
    const { index } = (snap as { context: RunnerPoolContext }).context;
    if (snap.value !== 'ready' || index.runningCount >= index.caps.globalMax) return;
    for (const u of index.userCounts()) {
      if (u.queued > 0 && u.running < u.cap) throw new Error(`idle slot while ${u.userId} waits`);
    }
  });
  return { pool, actor };
}

afterEach(() => {
  for (const w of started.splice(0)) w.stop();
});

describe('RunnerPool actor', () => {
  it('accepts enqueues while booting, and grants only once the running rows are in', async () => {
    const store = new FakeStore();
    store.rows.set('r1', { sessionId: 'r1', userId: 'ann', since: 1, status: 'running' });
    store.hold();
    const { pool, actor } = start(store);
    const a = waiter();
    store.queue('a1', 'ann', 5);
    store.queue('b1', 'bob', 6);
    const b = waiter();
    expect(pool.enqueue('ann', 'a1', a)).toBe(1);
    expect(pool.enqueue('bob', 'b1', b)).toBe(2);
    expect(slotsOf(a)).toEqual([]);
    store.release();
    await booted(pool);
    // ann already runs r1 (cap 1): bob gets the free slot, ann waits.
    expect(slotsOf(b)).toEqual(['b1']);
    expect(slotsOf(a)).toEqual([]);
    expect(pool.positionOf('a1')).toBe(1);
    expect(pool.snapshot().totals).toEqual({ running: 2, queued: 1 });
    actor.stop();
  });

  it('a waiter that crashes holding a slot frees it, and the next session is granted in that step', async () => {
    const store = new FakeStore();
    const { pool, actor } = start(store, 1, 1);
    await booted(pool);
    const [a, b, c] = [waiter(), waiter(), waiter()];
    expect(pool.enqueue('ann', 'a1', a)).toBe(0);
    expect(pool.enqueue('bob', 'b1', b)).toBe(1);
    expect(pool.enqueue('cyd', 'c1', c)).toBe(2);
    const seen: string[] = [];
    actor.subscribe((snap) => {
      const ctx = (snap as { context: RunnerPoolContext }).context;
      seen.push(`${ctx.index.session('a1')?.state ?? 'gone'}/${ctx.index.session('b1')?.state}`);
    });
    a.send({ type: 'CRASH' });
    await flush();
    // One step: a1 gone and b1 running together, never a state in between.
    expect(seen).toEqual(['gone/running']);
    expect(slotsOf(b)).toEqual(['b1']);
    expect(pool.positionOf('c1')).toBe(1);
    actor.stop();
  });

  it('a waiter that crashes while queued leaves the line, and those behind move up', async () => {
    const store = new FakeStore();
    const { pool, actor } = start(store, 1, 1);
    await booted(pool);
    const [a, b, c] = [waiter(), waiter(), waiter()];
    pool.enqueue('ann', 'a1', a);
    pool.enqueue('bob', 'b1', b);
    pool.enqueue('cyd', 'c1', c);
    b.send({ type: 'CRASH' });
    await flush();
    expect(pool.positionOf('b1')).toBeNull();
    expect(pool.positionOf('c1')).toBe(1);
    pool.release('a1');
    expect(slotsOf(c)).toEqual(['c1']);
    expect(slotsOf(b)).toEqual([]);
    actor.stop();
  });

  it('a released session is no longer monitored: its later exit changes nothing', async () => {
    const store = new FakeStore();
    const { pool, actor } = start(store, 1, 1);
    await booted(pool);
    const [a, b] = [waiter(), waiter()];
    pool.enqueue('ann', 'a1', a);
    pool.enqueue('ann', 'a2', b);
    pool.release('a1');
    expect(slotsOf(b)).toEqual(['a2']);
    a.send({ type: 'CRASH' });
    await flush();
    expect(pool.positionOf('a2')).toBe(0);
    actor.stop();
  });

  it('caps are written to user_caps and survive a restart; lowering one never stops a run', async () => {
    const store = new FakeStore();
    const first = start(store, 10, 1);
    await booted(first.pool);
    await first.pool.setUserCap('ann', 3);
    expect(store.caps.get('ann')).toBe(3);
    const ws = [waiter(), waiter(), waiter()];
    ws.forEach((w, i) => {
      store.queue(`a${i}`, 'ann', i);
      first.pool.enqueue('ann', `a${i}`, w);
      (store.rows.get(`a${i}`) as { status: string }).status = 'running';
    });
    expect(first.pool.snapshot().totals.running).toBe(3);
    first.actor.stop();

    const second = start(store, 10, 1);
    await booted(second.pool);
    expect(second.pool.snapshot().users).toEqual([
      { userId: 'ann', running: 3, queued: 0, cap: 3 },
    ]);
    await second.pool.setUserCap('ann', 1);
    expect(second.pool.snapshot().totals.running).toBe(3);
    const late = waiter();
    store.queue('a9', 'ann', 9);
    expect(second.pool.enqueue('ann', 'a9', late)).toBe(1);
    expect(slotsOf(late)).toEqual([]);
    await expect(second.pool.setUserCap('ann', -1)).rejects.toMatchObject({
      code: 'POOL_INVALID_CAP',
    });
    second.actor.stop();
  });

  it('a rebuild keeps sessions enqueued or released while the rows were loading', async () => {
    const store = new FakeStore();
    const { pool, actor } = start(store, 1, 1);
    await booted(pool);
    const [a, b] = [waiter(), waiter()];
    store.queue('a1', 'ann', 1);
    pool.enqueue('ann', 'a1', a);
    (store.rows.get('a1') as { status: string }).status = 'running';
    store.hold();
    pool.rebuild();
    await flush();
    // The load has read its rows; meanwhile a1 finishes and b1 arrives.
    pool.release('a1');
    (store.rows.get('a1') as { status: string }).status = 'done';
    store.queue('b1', 'bob', 2);
    expect(pool.enqueue('bob', 'b1', b)).toBe(0);
    store.release();
    await booted(pool);
    expect(pool.positionOf('a1')).toBeNull();
    expect(pool.positionOf('b1')).toBe(0);
    expect(store.loads).toBe(2);
    actor.stop();
  });

  it('a restarted waiter enqueueing a session that holds a slot is told again at once', async () => {
    const store = new FakeStore();
    const { pool, actor } = start(store, 1, 1);
    await booted(pool);
    const a = waiter();
    pool.enqueue('ann', 'a1', a);
    const again = waiter();
    expect(pool.enqueue('ann', 'a1', again)).toBe(0);
    expect(slotsOf(again)).toEqual(['a1']);
    // The old waiter is no longer watched: its exit frees nothing.
    a.send({ type: 'CRASH' });
    await flush();
    expect(pool.positionOf('a1')).toBe(0);
    actor.stop();
  });
});
