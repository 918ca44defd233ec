/**
 * What every dedicated connection of a node shares (the listener, the boot
 * and leader locks, the session probe): the timers it waits with, and a
 * close that cannot hang on a dead peer.
 */
import type pg from 'pg';

/** The timer functions a listener waits with; injectable so tests and other clocks drive it. */
export interface ListenTimers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const REAL_TIMERS: ListenTimers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/**
 * Ends a dedicated connection, waiting at most `ms`: `end()` waits for the
 * socket to close, and a dead peer may never say so. Its error is moot (the
 * connection is being given up either way).
 */
export async function endWithin(c: pg.Client, timers: ListenTimers, ms: number): Promise<void> {
  let timer: unknown;
  const deadline = new Promise<void>((resolve) => {
    timer = timers.setTimeout(resolve, ms);
  });
  await Promise.race([c.end().catch(() => {}), deadline]);
  timers.clearTimeout(timer);
}
