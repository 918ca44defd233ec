/**
 * The clock every container deadline and simulated timer runs on. Structurally
 * compatible with xstate's `SimulatedClock`, so one simulated clock can drive
 * both the actors and the simulated cluster in a test.
 */
export interface Clock {
  now(): number;
  // xstate's Clock takes `(...args: any[]) => void`; method parameters are
  // bivariant, so this narrower type still accepts a SimulatedClock.
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(id: unknown): void;
}

/** Real time, for production. */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (id) => clearTimeout(id as ReturnType<typeof setTimeout>),
};
