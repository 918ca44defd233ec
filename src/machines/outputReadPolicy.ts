/**
 * The output-read policy: a run exited (its exit code is known) and reading
 * its output back failed. Read again later, or finish without the output?
 *
 * Why it exists: the output of an agent or build run is most of what its
 * user paid for, and it sits in a container that outlives the exit. A read
 * that met an engine restart or a slow API (`unavailable`, `timeout`) used to
 * finish the run at once with one line saying the output could not be read,
 * although a read a few seconds later would have found all of it. A read that
 * cannot succeed later (`not_found`: the service was removed; any other code)
 * still gives up at once. Pure: the ContainerRun chart passes the error's
 * code and the time since the first failed read, and acts on the answer.
 */

/** What to do after a failed read of an exited run's output. */
export type OutputReadDecision = { kind: 'read_again'; inMs: number } | { kind: 'give_up' };

/** A failed read: its `ContainerError` code (null when the error carried none), and the limits. */
export interface OutputReadFailure {
  code: string | null;
  /** Since the first read of this run's output failed (≥ 0). */
  elapsedMs: number;
  /** How long reads are tried again, from the first failure (the adopt budget). */
  budgetMs: number;
  /** The wait between reads (the adopt poll interval, > 0). */
  pollMs: number;
}

/**
 * True for the codes of an engine that could not answer right now, the only
 * failures a later read can get past.
 *
 * @example
 * ```ts
 * outputReadCanRecover('unavailable') // => true
 * outputReadCanRecover('timeout') // => true
 * outputReadCanRecover('not_found') // => false
 * outputReadCanRecover(null) // => false
 * ```
 */
export function outputReadCanRecover(code: string | null): boolean {
  return code === 'unavailable' || code === 'timeout';
}

/**
 * Decides after a failed read: an engine outage is read again every
 * `pollMs` until `budgetMs` has passed since the first failure (the last wait
 * cut to end on the budget, so the budget is the deadline, not a minimum);
 * anything else gives up at once. No backoff: the reads are one call each
 * per run, already spaced by the poll interval the adopt loop uses.
 *
 * @example
 * ```ts
 * decideOutputRead({ code: 'unavailable', elapsedMs: 0, budgetMs: 60_000, pollMs: 5_000 }) // => { kind: 'read_again', inMs: 5000 }
 * decideOutputRead({ code: 'timeout', elapsedMs: 58_000, budgetMs: 60_000, pollMs: 5_000 }) // => { kind: 'read_again', inMs: 2000 }
 * decideOutputRead({ code: 'unavailable', elapsedMs: 60_000, budgetMs: 60_000, pollMs: 5_000 }) // => { kind: 'give_up' }
 * decideOutputRead({ code: 'not_found', elapsedMs: 0, budgetMs: 60_000, pollMs: 5_000 }) // => { kind: 'give_up' }
 * decideOutputRead({ code: 'unavailable', elapsedMs: -1, budgetMs: 60_000, pollMs: 5_000 }) // throws RangeError
 * ```
 */
export function decideOutputRead(failure: OutputReadFailure): OutputReadDecision {
  const { code, elapsedMs, budgetMs, pollMs } = failure;
  if (!Number.isFinite(elapsedMs) || elapsedMs < 0)
    throw new RangeError(`elapsedMs must be a finite number ≥ 0, got ${elapsedMs}`);
  if (!Number.isFinite(budgetMs) || budgetMs < 0)
    throw new RangeError(`budgetMs must be a finite number ≥ 0, got ${budgetMs}`);
  if (!Number.isFinite(pollMs) || pollMs <= 0)
    throw new RangeError(`pollMs must be a finite number > 0, got ${pollMs}`);
  if (!outputReadCanRecover(code) || elapsedMs >= budgetMs) return { kind: 'give_up' };
  return { kind: 'read_again', inMs: Math.min(pollMs, budgetMs - elapsedMs) };
}
