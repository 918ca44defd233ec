/**
 * Timers that run every wait a fraction as long: a store handle given
 * `TENTH_TIMERS` waits 0.5 s of real time for the session probe's 5 s
 * deadline, and its listener's and locks' retries and pings as much sooner.
 */
import type { ListenTimers } from '../../src/db/dedicatedClient.js';

/** Every wait a tenth as long. */
export const TENTH_TIMERS: ListenTimers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms / 10),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};
