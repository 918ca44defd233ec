/**
 * The dispatcher's vocabulary (src/actors/dispatcher.ts): its options, the
 * op a caller hands in, and its typed errors.
 */

import type { Session, Task } from '../db/rows.js';
import type { TickInput, TickOp, TickResult } from '../db/tickTypes.js';
import type { SupervisorClock } from '../supervisor/clock.js';
import type { RuntimeCaps } from './runtimeTypes.js';

/** A caller's op waited past its deadline while the store did not answer. */
export class DispatchUnavailableError extends Error {
  override readonly name = 'DispatchUnavailableError';
  readonly code = 'DISPATCH_UNAVAILABLE';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/**
 * The dispatcher was stopped before the op's tick answered: `sent` false
 * when no tick carried it (nothing was written), true when a tick carried
 * it and failed without an answer (a commit whose reply was lost looks the
 * same), so it may have been applied.
 */
export class DispatcherStoppedError extends Error {
  override readonly name = 'DispatcherStoppedError';
  readonly code = 'DISPATCHER_STOPPED';
  constructor(readonly sent = false) {
    super(
      sent
        ? 'the dispatcher stopped after a tick carrying the op failed'
        : 'the dispatcher is stopped',
    );
  }
}

/** Timers the dispatcher needs: the runtime's clock. */
export type DispatchClock = SupervisorClock;

export interface DispatcherOptions {
  owner: string;
  caps: RuntimeCaps;
  /** Most sessions this node runs at once; a tick asks for `localMax - held`. */
  localMax: number;
  clock: DispatchClock;
  tick(input: TickInput): Promise<TickResult>;
  /** Errors worth sending the same tick again for (connection lost, timeouts). */
  isTransient(error: unknown): boolean;
  /** Backoff between failed ticks: base * 2^(n-1), capped. */
  backoff: { baseMs: number; maxMs: number };
  /** Longest an op waits for a tick that succeeds before its caller is told. */
  opDeadlineMs: number;
  /**
   * How long the store may fail before a caller's command (`command()`) is
   * answered `unavailable` instead of waiting for `opDeadlineMs`; from then
   * on, new commands are answered at once (dispatcherFailure.ts,
   * `outageAnswered`). Unset: commands wait like every op.
   */
  commandOutageMs?: number;
  /** Most ops one tick carries. */
  maxOpsPerTick: number;
  /**
   * Most ticks out at once. Default 1: a second tick out only queues on the
   * tick's lock, and it halves the batches. With two out, the peers bench
   * made 0.154 ticks per job on one node and 0.30 with three nodes (each
   * node's second tick waiting behind the others'); with one, 0.102 and
   * 0.108, commits per job 0.22 -> 0.163 and 1.45 -> 0.80, and 1.2x and
   * 1.6-2.2x the jobs per second (alternated runs at load 7-8).
   */
  maxInFlight?: number;
  /**
   * While a tick is out, another departs only once this many ops wait
   * (default 16); fewer wait for the reply instead. A second tick only
   * queues on the tick's lock until the first commits, so sending it small
   * gains nothing and makes every later tick smaller: with finishes
   * arriving one by one, ticks carried ~6 ops each. The reply starts the
   * next tick before its grants are handed out, so the database does not
   * wait for the node either.
   */
  pipelineAt?: number;
  /**
   * Most turns of the event loop a tick waits for more ops while they keep
   * arriving (default 8); it leaves at the first turn that brought none
   * (src/actors/dispatcherDeparture.ts). 0: it leaves after one microtask,
   * with the ops of the turn that scheduled it.
   */
  coalesceTurns?: number;
  /** Runs `fn` on the next turn of the event loop (default `setImmediate`). */
  nextTurn?(fn: () => void): void;
  /**
   * Checks one op when it is submitted (throws for a bad one), so a bad op
   * is its caller's error at once and never fails the batch it would ride.
   */
  validate?(op: TickOp): void;
  /** False while this node must take no grants (its container engine is down). */
  mayGrant(): boolean;
  /** Every successful tick, after its callers were answered, with the ops it carried. */
  onTick(result: TickResult, ops: readonly TickOp[]): void;
  /** A session granted to this node: start its runner. */
  onGranted(grant: { session: Session; task: Task }): void;
  onError(error: unknown): void;
  /** Counts I/O in flight (the harness settles on it). */
  track<T>(work: Promise<T>): Promise<T>;
}

/** An op as a caller hands it in: the dispatcher gives it its `ref`. */
export type OpInput = TickOp extends infer O ? (O extends TickOp ? Omit<O, 'ref'> : never) : never;
