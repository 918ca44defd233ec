/**
 * The pool under the supervisor: kill it (its load fails) and the restarted
 * pool rebuilds from the rows; nothing a user waits for is lost, and waiters
 * that ask again get their place or their slot back.
 */
import { describe, expect, it } from 'vitest';
import { type AnyActorRef, assign, createActor, setup, waitFor } from 'xstate';
import type { PoolRows, PoolStore } from '../../src/actors/runnerPool.js';
import { RunnerPool, runnerPoolLogic } from '../../src/actors/runnerPoolClient.js';
import type { PoolRow } from '../../src/machines/poolIndex.js';
import { startSupervisor } from '../../src/supervisor/index.js';

class RowStore implements PoolStore {
  rows = new Map<string, PoolRow & { status: 'queued' | 'running' }>();
  failNext = false;
  async loadRows(): Promise<PoolRows> {
    if (this.failNext) {
      this.failNext = false;
      throw new Error('connection reset');
    }
    const all = [...this.rows.values()];
    return {
      queued: all.filter((r) => r.status === 'queued'),
      running: all.filter((r) => r.status === 'running'),
    };
  }
  loadCaps = async () => new Map<string, number>();
  saveCap = async () => {};
}

const waiterMachine = setup({ types: { context: {} as { slots: string[] } } }).createMachine({
  context: { slots: [] },
  on: {
    runner_slot: {
      actions: assign({ slots: ({ context, event }) => [...context.slots, event.sessionId] }),
    },
  },
});

describe('RunnerPool under the supervisor', () => {
  it('a crashed pool is restarted and rebuilt from the rows, losing nothing', async () => {
    const store = new RowStore();
    let t = 0;
    const now = () => (t += 1);
    const sup = await startSupervisor({
      children: [
        {
          id: 'runnerPool',
          start: {
            logic: runnerPoolLogic(store),
            input: { caps: { globalMax: 2, perUserMax: 1 }, now },
          },
        },
      ],
    });
    const current = () => sup.child('runnerPool') as AnyActorRef;
    const pool = new RunnerPool(current, store, now);
    await waitFor(current(), (s) => s.value === 'ready', { timeout: 5_000 });
    const waiters = ['a1', 'a2', 'b1', 'c1'].map(() => createActor(waiterMachine).start());
    const users = ['ann', 'ann', 'bob', 'cyd'];
    ['a1', 'a2', 'b1', 'c1'].forEach((id, i) => {
      store.rows.set(id, { sessionId: id, userId: users[i] as string, since: i, status: 'queued' });
      const position = pool.enqueue(users[i] as string, id, waiters[i] as AnyActorRef);
      if (position === 0) (store.rows.get(id) as { status: string }).status = 'running';
    });
    const before = pool.snapshot();
    expect(before.totals).toEqual({ running: 2, queued: 2 });

    const first = current();
    store.failNext = true;
    pool.rebuild();
    // The failed load is the pool's crash: it escalates to the supervisor.
    await expect(waitFor(first, () => false, { timeout: 5_000 })).rejects.toThrow(
      'connection reset',
    );
    await waitFor(current(), (s) => s !== undefined && s.value === 'ready', { timeout: 5_000 });
    expect(current()).not.toBe(first);

    const after = pool.snapshot();
    expect(after.totals).toEqual(before.totals);
    expect(after.sessions.map((s) => [s.sessionId, s.state]).sort()).toEqual(
      before.sessions.map((s) => [s.sessionId, s.state]).sort(),
    );
    // Restarted runners ask again: a holder is told at once, a queued one keeps waiting.
    const again = createActor(waiterMachine).start();
    expect(pool.enqueue('ann', 'a1', again)).toBe(0);
    expect(again.getSnapshot().context.slots).toEqual(['a1']);
    expect(pool.enqueue('ann', 'a2', createActor(waiterMachine).start())).toBeGreaterThan(0);
    pool.close();
    await sup.shutdown();
  });
});
