import { describe, expect, it, vi } from 'vitest';
import { type ProgressClock, withProgress } from '../../src/cli/withProgress.js';

/** A clock the test moves by hand; `tick` fires the interval once. */
function manualClock() {
  let now = 0;
  let fn: (() => void) | null = null;
  const clock: ProgressClock = {
    now: () => now,
    setInterval: (f) => {
      fn = f;
      return 'h';
    },
    clearInterval: () => {
      fn = null;
    },
  };
  return {
    clock,
    advance(ms: number) {
      now += ms;
      fn?.();
    },
    active: () => fn !== null,
  };
}

const logger = () => ({ info: vi.fn(), error: vi.fn() });

describe('withProgress', () => {
  it('redraws one line on a terminal and closes it with the time taken', async () => {
    const c = manualClock();
    const out: string[] = [];
    let finish: (v: number) => void = () => {};
    const done = withProgress(
      'migrating',
      () => new Promise<number>((r) => (finish = r)),
      { isTTY: true, write: (t) => out.push(t), logger: logger(), clock: c.clock },
      (n) => `applied ${n}`,
    );
    c.advance(1_250);
    expect(out.at(-1)?.startsWith('\r\x1b[2K')).toBe(true);
    expect(out.at(-1)).toMatch(/ migrating… 1\.2s$/);
    c.advance(300);
    finish(2);
    await expect(done).resolves.toBe(2);
    expect(out.at(-1)).toBe('\r\x1b[2K✓ migrating in 1.5s: applied 2\n');
    expect(c.active()).toBe(false);
  });

  it('logs a start and an end record when not on a terminal, and never redraws', async () => {
    const c = manualClock();
    const log = logger();
    const out: string[] = [];
    await withProgress('sweep', async () => 'ok', {
      isTTY: false,
      write: (t) => out.push(t),
      logger: log,
      clock: c.clock,
    });
    expect(out).toEqual([]);
    expect(log.info).toHaveBeenCalledTimes(2);
    expect(log.info.mock.calls[1]![1]).toBe('sweep done');
  });

  it('marks a failure, stops redrawing, and rethrows the error untouched', async () => {
    const c = manualClock();
    const out: string[] = [];
    const error = new Error('disk full');
    const run = withProgress(
      'migrating',
      async () => {
        throw error;
      },
      { isTTY: true, write: (t) => out.push(t), logger: logger(), clock: c.clock },
    );
    await expect(run).rejects.toBe(error);
    expect(out.at(-1)).toMatch(/✗ migrating failed after 0\.0s\n$/);
    expect(c.active()).toBe(false);
  });

  it('logs a failure as an error record off a terminal', async () => {
    const log = logger();
    await expect(
      withProgress('x', () => Promise.reject(new Error('no')), {
        isTTY: false,
        write: () => {},
        logger: log,
        clock: manualClock().clock,
      }),
    ).rejects.toThrow('no');
    expect(log.error).toHaveBeenCalledOnce();
  });
});
