/**
 * Database errors are conditions, not crashes (issue: the node survives its
 * own faults). A runner's read or compare-and-set that fails because the
 * server is restarting or a deadline passed is tried again with a capped
 * backoff until its own deadline; any other error is a bug and is thrown at
 * once, so the actor crashes and its supervisor sees it. Retrying a
 * compare-and-set is safe: it is fenced by the epoch, so a write whose
 * reply was lost fails the second time as stale, never applies twice.
 */
import { backoffDelay } from '../common/backoff.js';
import type { SupervisorClock } from '../supervisor/clock.js';

export interface RetryOptions {
  clock: SupervisorClock;
  isTransient(error: unknown): boolean;
  /** First delay; doubles up to `maxMs`. */
  baseMs: number;
  maxMs: number;
  /** Past this, the last error is thrown (every wait has a deadline). */
  deadlineMs: number;
  /** Aborted: the actor stopped; give up at the next try. */
  signal?: AbortSignal;
}

/** Runs `work`, trying again on transient errors as the file comment says. */
export async function retryTransient<T>(work: () => Promise<T>, o: RetryOptions): Promise<T> {
  const started = o.clock.now();
  for (let attempt = 0; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (!o.isTransient(error) || o.signal?.aborted) throw error;
      const delay = backoffDelay(attempt, { minMs: o.baseMs, maxMs: o.maxMs });
      if (o.clock.now() + delay - started > o.deadlineMs) throw error;
      await new Promise<void>((resolve) => o.clock.setTimeout(resolve, delay));
    }
  }
}
