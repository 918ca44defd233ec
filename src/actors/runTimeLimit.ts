/**
 * A run's time limit, kept by the node that holds the run. The timer runs on
 * the injected clock from the grant's time (`claimed_at`, the moment the run
 * took its runner), so a runner restarted after a crash, or a run adopted by
 * another node after a deploy, counts from the same instant: the limit is the
 * run's, not the process's. Past it, the run is failed as `timed_out` with its
 * output so far (a compare-and-set at the run's epoch, through the tick, so
 * its slot goes to the next in line in the same commit), then stopped as a
 * cancel stops it: the runner's `cancelling` state removes the container and
 * releases the slot. A run that ended meanwhile wins the compare-and-set and
 * nothing is stopped.
 */
import { TIMED_OUT } from '../board/timeLimit.js';
import type { RunOutput } from '../containers/ContainerBackend.js';
import type { Session } from '../db/index.js';
import type { TickFinish } from '../db/tickTypes.js';

/**
 * How long a run granted at `claimedAt` has left of `limitMs` at `now` (ms
 * since the epoch), never less than 0. A row with no grant time (a write
 * outside ticks) counts from `now`.
 *
 * @example
 * ```ts
 * msLeft(new Date(10_000), 60_000, 40_000) // => 30000
 * msLeft(new Date(10_000), 60_000, 90_000) // => 0
 * msLeft(null, 60_000, 40_000) // => 60000
 * ```
 */
export function msLeft(claimedAt: Date | null, limitMs: number, now: number): number {
  const from = claimedAt === null ? now : claimedAt.getTime();
  return Math.max(0, from + limitMs - now);
}

/**
 * How long past its limit a run is left to the node that holds it before
 * the Reconciler takes it from that node to time it out (`overdue`): the
 * holder's own timer fires at the limit, then reads the output (within the
 * container I/O deadline) and sends the finish (within the store's
 * deadline). Past both, it is not going to: a node of a version before
 * time limits, in a rolling deploy, or one whose timer is lost. With the
 * defaults (120 s and 60 s), three minutes.
 *
 * @example
 * ```ts
 * overdueGraceMs({ ioTimeoutMs: 120_000, storeDeadlineMs: 60_000 }) // => 180000
 * ```
 */
export function overdueGraceMs(o: { ioTimeoutMs: number; storeDeadlineMs: number }): number {
  return o.ioTimeoutMs + o.storeDeadlineMs;
}

/**
 * Whether a run granted at `claimedAt` is past `limitMs` by more than
 * `graceMs` at `now`. A row with no grant time (a write outside ticks) is
 * never overdue: its holder counts from when it first saw it.
 *
 * @example
 * ```ts
 * overdue(new Date(0), 60_000, 120_000, 60_000) // => false
 * overdue(new Date(0), 60_000, 120_001, 60_000) // => true
 * overdue(null, 60_000, 10 ** 12, 60_000) // => false
 * ```
 */
export function overdue(
  claimedAt: Date | null,
  limitMs: number,
  now: number,
  graceMs: number,
): boolean {
  return claimedAt !== null && now - claimedAt.getTime() > limitMs + graceMs;
}

/**
 * The finish of a run past its limit: failed as `timed_out`, with the output
 * read so far (null: none could be read). Not recoverable by the user: run
 * again as it is, it would most likely time out again (as `exit_code`).
 *
 * @example
 * ```ts
 * timedOutFinish({ id: 's1', epoch: 3 } as Session, null).reason // => 'timed_out'
 * timedOutFinish({ id: 's1', epoch: 3 } as Session, null).epoch // => 3
 * timedOutFinish({ id: 's1', epoch: 3 } as Session, { text: 'step 1\n', totalBytes: 7, truncated: false }).output?.text // => 'step 1\n'
 * ```
 */
export function timedOutFinish(s: Session, output: RunOutput | null): Omit<TickFinish, 'ref'> {
  return {
    op: 'finish',
    sessionId: s.id,
    epoch: s.epoch,
    status: 'failed',
    exitCode: null,
    reason: TIMED_OUT,
    userRecoverable: false,
    output,
    column: 'failed',
    requeue: null,
  };
}
