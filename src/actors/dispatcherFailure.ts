/**
 * What a failed tick does to its ops, pure: a transient failure (the server
 * restarting, a timeout) sends them again as they are; any other failure
 * splits them, one per tick, until the bad one is found and only its caller
 * sees the error; and an op that waited past its deadline is given up.
 * The dispatcher (src/actors/dispatcher.ts) applies the decision.
 */
import type { Entry } from './dispatcherBatch.js';

/** What becomes of a failed tick's batch. */
export interface FailedBatch<E> {
  /** The one op found bad: its caller is told the error. */
  rejected: E | null;
  /** Back to the head of the outbox, in their order (marked solo once split). */
  requeued: E[];
  /** Whether the error is the node's to report (its callers do not all hear it). */
  report: boolean;
}

/**
 * The decision for `batch` after a tick carrying it failed.
 *
 * @example
 * ```ts
 * const a = { solo: false }, b = { solo: false };
 * afterFailure([a, b], true) // => { rejected: null, requeued: [a, b], report: false }
 * afterFailure([a, b], false) // => { rejected: null, requeued: [{ solo: true }, { solo: true }], report: true }
 * afterFailure([a], false) // => { rejected: a, requeued: [], report: true }
 * afterFailure([], true) // => { rejected: null, requeued: [], report: true }
 * ```
 */
export function afterFailure<E extends Pick<Entry, 'solo'>>(
  batch: readonly E[],
  transient: boolean,
): FailedBatch<E> {
  const report = !transient || batch.length === 0;
  if (!transient && batch.length === 1) return { rejected: batch[0] ?? null, requeued: [], report };
  const requeued = transient ? [...batch] : batch.map((e) => ({ ...e, solo: true }));
  return { rejected: null, requeued, report };
}

/**
 * `pending` split at `limit`: ops that arrived after it wait on, the rest are late.
 *
 * @example
 * ```ts
 * splitLate([{ at: 5 }, { at: 6 }], 5) // => { keep: [{ at: 6 }], late: [{ at: 5 }] }
 * ```
 */
export function splitLate<E extends Pick<Entry, 'at'>>(
  pending: readonly E[],
  limit: number,
): { keep: E[]; late: E[] } {
  const keep: E[] = [];
  const late: E[] = [];
  for (const e of pending) (e.at > limit ? keep : late).push(e);
  return { keep, late };
}
