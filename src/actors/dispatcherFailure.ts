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

/**
 * Whether the store has been failing for `commandOutageMs` at `now`: from
 * then on a caller's command is answered `unavailable` instead of waiting
 * out `storeDeadlineMs` (a minute by default), which a load balancer or a
 * person at the CLI would not. A shorter failure (a restart, a failover of
 * a few seconds, one deadlock) stays invisible: the command rides the first
 * tick that commits. `failingSince` is when the first tick of the current
 * run of failures failed (null: the last tick committed).
 *
 * @example
 * ```ts
 * outageAnswered({ failingSince: null, now: 90_000, commandOutageMs: 10_000 }) // => false
 * outageAnswered({ failingSince: 1_000, now: 10_999, commandOutageMs: 10_000 }) // => false
 * outageAnswered({ failingSince: 1_000, now: 11_000, commandOutageMs: 10_000 }) // => true
 * ```
 */
export function outageAnswered(o: {
  failingSince: number | null;
  now: number;
  commandOutageMs: number;
}): boolean {
  return o.failingSince !== null && o.now - o.failingSince >= o.commandOutageMs;
}

/**
 * What a command's caller hears when the outage answers it: whether it may
 * have been applied after all (a tick carrying it was sent, and a commit
 * whose reply was lost looks the same as no commit) or certainly was not.
 *
 * @example
 * ```ts
 * outageMessage({ op: 'enqueue', sent: false, downMs: 10_000 }) // => 'the store did not answer for 10000 ms: enqueue was not applied'
 * outageMessage({ op: 'enqueue', sent: true, downMs: 12_500 }) // => 'the store did not answer for 12500 ms: enqueue may have been applied (submit again with the same key to be sure)'
 * outageMessage({ op: 'cancel', sent: true, downMs: 12_500 }) // => 'the store did not answer for 12500 ms: cancel may have been applied (read the task back to see)'
 * ```
 */
export function outageMessage(o: { op: string; sent: boolean; downMs: number }): string {
  const head = `the store did not answer for ${o.downMs} ms: ${o.op}`;
  if (!o.sent) return `${head} was not applied`;
  const check =
    o.op === 'enqueue' ? 'submit again with the same key to be sure' : 'read the task back to see';
  return `${head} may have been applied (${check})`;
}
