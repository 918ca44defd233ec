/**
 * The store half of /readyz: one query in flight however many probes come,
 * a deadline on the runtime's clock, an answer that stands for `freshMs`,
 * and no second query while one is out past its deadline.
 */
import { describe, expect, it } from 'vitest';
import { SimulatedClock } from 'xstate';
import { StoreProbe } from '../../src/actors/storeProbe.js';
import type { SupervisorClock } from '../../src/supervisor/clock.js';

/** A query the test answers by hand. */
function manualQuery() {
  const calls: Array<{ resolve(): void; reject(e: Error): void }> = [];
  return {
    calls,
    query: () =>
      new Promise<void>((resolve, reject) => {
        calls.push({ resolve, reject });
      }),
  };
}

const flush = async () => {
  for (let i = 0; i < 5; i++) await Promise.resolve();
};

function probeWith(q: ReturnType<typeof manualQuery>) {
  const clock = new SimulatedClock();
  const probe = new StoreProbe({
    query: q.query,
    clock: clock as SupervisorClock,
    deadlineMs: 1_000,
    freshMs: 500,
  });
  return { clock, probe };
}

describe('StoreProbe', () => {
  it('concurrent probes share the one query in flight', async () => {
    const q = manualQuery();
    const { probe } = probeWith(q);
    const answers = Promise.all(Array.from({ length: 100 }, () => probe.check()));
    expect(q.calls.length).toBe(1);
    q.calls[0]?.resolve();
    expect(new Set(await answers)).toEqual(new Set(['ok']));
    expect(probe.queries).toBe(1);
  });

  it('an answer stands for freshMs, then the store is asked again', async () => {
    const q = manualQuery();
    const { clock, probe } = probeWith(q);
    const first = probe.check();
    q.calls[0]?.resolve();
    expect(await first).toBe('ok');
    clock.increment(499);
    expect(await probe.check()).toBe('ok');
    expect(q.calls.length).toBe(1);
    clock.increment(1);
    const again = probe.check();
    expect(q.calls.length).toBe(2);
    q.calls[1]?.reject(new Error('connect ECONNREFUSED'));
    expect(await again).toBe('unavailable');
  });

  it('a store that does not answer by the deadline is a timeout, and no second query is sent while the first is out', async () => {
    const q = manualQuery();
    const { clock, probe } = probeWith(q);
    const first = probe.check();
    clock.increment(999);
    await flush();
    let settled = false;
    void first.then(() => {
      settled = true;
    });
    await flush();
    expect(settled).toBe(false);
    clock.increment(1);
    expect(await first).toBe('timeout');
    // Long after, the query is still out: every probe says timeout, none queries.
    clock.increment(60_000);
    const flood = await Promise.all(Array.from({ length: 1_000 }, () => probe.check()));
    expect(new Set(flood)).toEqual(new Set(['timeout']));
    expect(probe.queries).toBe(1);
    // It ends (the pool's own deadline, or a late answer): the next probe asks again.
    q.calls[0]?.resolve();
    await flush();
    const next = probe.check();
    expect(probe.queries).toBe(2);
    q.calls[1]?.resolve();
    expect(await next).toBe('ok');
  });
});
