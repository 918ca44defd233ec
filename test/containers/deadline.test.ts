import { describe, expect, it } from 'vitest';
import { SimulatedClock } from 'xstate';
import { withDeadline } from '../../src/containers/deadline.js';

const flush = () => new Promise<void>((r) => setImmediate(r));

describe('withDeadline', () => {
  it('resolves with the work when it finishes in time', async () => {
    const clock = new SimulatedClock();
    await expect(withDeadline(Promise.resolve(5), { clock, ms: 10, what: 'x' })).resolves.toBe(5);
  });

  it('rejects with timeout on the injected clock and abandons the work', async () => {
    const clock = new SimulatedClock();
    let abandoned = false;
    const p = withDeadline(new Promise(() => undefined), {
      clock,
      ms: 1000,
      what: 'observe rt-s1',
      onAbandon: () => {
        abandoned = true;
      },
    });
    clock.increment(999);
    await flush();
    expect(abandoned).toBe(false);
    clock.increment(1);
    await expect(p).rejects.toMatchObject({ code: 'timeout', message: /observe rt-s1/ });
    expect(abandoned).toBe(true);
  });

  it('rejects with aborted when the signal fires, before or during the wait', async () => {
    const clock = new SimulatedClock();
    const early = new AbortController();
    early.abort('stop');
    await expect(
      withDeadline(new Promise(() => undefined), {
        clock,
        ms: 10,
        what: 'x',
        signal: early.signal,
      }),
    ).rejects.toMatchObject({ code: 'aborted' });
    const late = new AbortController();
    const p = withDeadline(new Promise(() => undefined), {
      clock,
      ms: 10,
      what: 'x',
      signal: late.signal,
    });
    late.abort();
    await expect(p).rejects.toMatchObject({ code: 'aborted' });
  });

  it('classifies foreign errors and keeps them as cause', async () => {
    const clock = new SimulatedClock();
    const cause = new Error('socket hang up');
    await expect(
      withDeadline(Promise.reject(cause), { clock, ms: 10, what: 'list' }),
    ).rejects.toMatchObject({ code: 'engine', cause });
  });
});
