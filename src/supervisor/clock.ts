/**
 * The clock every supervisor timer runs on: restart windows, backoff delays,
 * shutdown deadlines and call timeouts.
 *
 * It is a superset of XState's `Clock` (which has no `now()`), and XState's
 * `SimulatedClock` satisfies it, so one simulated clock drives both the
 * supervisor's timers and the children's `after` delays in tests.
 */
export interface SupervisorClock {
  now(): number;
  // XState's Clock types its timer ids as `any`; `unknown` keeps ours honest.
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(id: unknown): void;
}

/** The real clock: `Date.now()` and the global timers. */
export const systemClock: SupervisorClock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (id) => clearTimeout(id as ReturnType<typeof setTimeout>),
};
