/**
 * The virtual clock stands for Node's: a delay a Node timer cannot hold
 * (above 2^31 - 1 ms, ~24.8 days) fires after 1 ms there, with a
 * TimeoutOverflowWarning, and so it does here, so a test finds the bug a
 * long wait would be in production instead of passing on a clock that
 * waited the days.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MAX_TIMER_MS } from '../../src/common/maxTimerMs.js';
import { nodeDelay, TestClock } from '../../src/testing/TestClock.js';
import { runDocExamples } from '../support/docExamples.js';

afterEach(() => {
  vi.restoreAllMocks();
});

/** When a timer of `ms` set at the clock's start fires, relative to that start; null: not within `within`. */
function firesAfter(clock: TestClock, ms: number, within = 2 * MAX_TIMER_MS + 10): number | null {
  const start = clock.now();
  let fired: number | null = null;
  clock.setTimeout(() => {
    fired = clock.now() - start;
  }, ms);
  const due = clock.nextDue(start + within);
  if (due !== null) clock.fireNext(due);
  return fired;
}

describe('TestClock, as a Node timer would', () => {
  it('a delay up to 2^31 - 1 ms fires at its face value', () => {
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    expect(firesAfter(new TestClock(0), MAX_TIMER_MS)).toBe(MAX_TIMER_MS);
    expect(firesAfter(new TestClock(0), 250)).toBe(250);
    expect(firesAfter(new TestClock(0), 0)).toBe(0);
    expect(warn).not.toHaveBeenCalled();
  });

  it.each([MAX_TIMER_MS + 1, 3_000_000_000, Number.POSITIVE_INFINITY])(
    'a delay of %d ms fires after 1 ms, with a TimeoutOverflowWarning',
    (ms) => {
      const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
      expect(firesAfter(new TestClock(0), ms)).toBe(1);
      expect(warn).toHaveBeenCalledTimes(1);
      expect(warn.mock.calls[0]?.[1]).toBe('TimeoutOverflowWarning');
      expect(String(warn.mock.calls[0]?.[0])).toContain(
        `${ms} does not fit into a 32-bit signed integer`,
      );
    },
  );

  it('a delay that is not a number fires after 1 ms, not never', () => {
    expect(firesAfter(new TestClock(0), Number.NaN)).toBe(1);
  });
});

runDocExamples(new URL('../../src/testing/TestClock.ts', import.meta.url), { nodeDelay });
