/**
 * The clock every container deadline and simulated timer runs on. Structurally
 * compatible with xstate's `SimulatedClock`, so one simulated clock can drive
 * both the actors and the simulated cluster in a test.
 */
export interface Clock {
  now(): number;
  // biome-ignore lint/suspicious/noExplicitAny: matches xstate's Clock, whose callbacks take any args
  setTimeout(fn: (...args: any[]) => void, ms: number): unknown;
  clearTimeout(id: unknown): void;
}

/** Real time, for production. */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (id) => clearTimeout(id as ReturnType<typeof setTimeout>),
};
