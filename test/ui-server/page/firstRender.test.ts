import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createBoardStore } from '../../../src/client/boardStore.js';
import { hasFirstFrame, renderOnFirstFrame } from '../../../src/ui-server/page/firstRender.js';
import { queuedCard } from '../../client/clientHarness.js';

const WAIT_MS = 500;
const counts = { queued: 1, running: 0, done: 0, failed: 0 };
const snapshot = { epoch: 'e', seq: 1, counts, users: ['alice'], cards: [queuedCard('t1')] };

describe('the board page’s first render', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  /** A store still connecting, and how many times the page rendered with which cards. */
  function waiting() {
    const store = createBoardStore();
    const renders: string[][] = [];
    renderOnFirstFrame(store, WAIT_MS, () =>
      renders.push(Object.keys(store.getSnapshot().context.cards)),
    );
    return { store, renders };
  }

  it('waits for the snapshot and draws once, with its cards, right after the frame is handled', async () => {
    const { store, renders } = waiting();
    store.trigger.hello({ userId: 'alice' });
    await Promise.resolve();
    expect(renders).toEqual([]);
    store.trigger.snapshot(snapshot);
    expect(renders).toEqual([]); // not inside the store's listener
    await Promise.resolve();
    expect(renders).toEqual([['t1']]);
    store.trigger.update({ seq: 2, cards: [queuedCard('t2')], removed: [] });
    await vi.advanceTimersByTimeAsync(WAIT_MS);
    expect(renders).toHaveLength(1);
  });

  it('draws at once when the store already holds its first frame (the early socket’s, replayed)', () => {
    const store = createBoardStore();
    store.trigger.snapshot(snapshot);
    let renders = 0;
    renderOnFirstFrame(store, WAIT_MS, () => {
      renders += 1;
    });
    expect(renders).toBe(1);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('draws on a lost socket or an error frame, which have something to show too', async () => {
    const offline = waiting();
    offline.store.trigger.connection({ state: 'offline' });
    await Promise.resolve();
    expect(offline.renders).toEqual([[]]);
    const refused = waiting();
    refused.store.trigger.error({ code: 'bad_server_frame', message: 'no' });
    await Promise.resolve();
    expect(refused.renders).toEqual([[]]);
  });

  it('draws the empty board after the longest wait, and not again when the snapshot comes', async () => {
    const { store, renders } = waiting();
    await vi.advanceTimersByTimeAsync(WAIT_MS - 1);
    expect(renders).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(renders).toEqual([[]]);
    store.trigger.snapshot(snapshot);
    await Promise.resolve();
    expect(renders).toHaveLength(1);
  });

  it('counts a store as drawable once it left connecting or holds an error', () => {
    const store = createBoardStore();
    expect(hasFirstFrame(store.getSnapshot().context)).toBe(false);
    store.trigger.connection({ state: 'closed' });
    expect(hasFirstFrame(store.getSnapshot().context)).toBe(true);
  });
});
