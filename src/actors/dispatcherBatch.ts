/**
 * The dispatcher's outbox entries and what the cut of a tick's batch reads
 * of them (src/actors/dispatcherOutbox.ts): pure, so the limits are tested
 * without a clock or a database.
 */
import type { TickCancel, TickFinish, TickOp, TickOutcome } from '../db/tickTypes.js';

/** One op waiting for a tick, with its caller's promise. */
export interface Entry {
  op: TickOp;
  at: number;
  /** Send alone: a tick that carried it failed for a reason that is not transient. */
  solo: boolean;
  /**
   * A caller's command (submit, cancel, retry, cap), answered `unavailable`
   * once the store has failed for `commandOutageMs`; the runtime's own ops
   * (handles, finishes) wait for their deadline.
   */
  command?: boolean;
  /** A tick carrying it was sent: if it is given up, it may have been applied. */
  sent?: boolean;
  resolve(outcome: TickOutcome): void;
  reject(error: unknown): void;
}

/** Rough size of an op in a tick's JSON: outputs dominate. */
export const weight = (op: TickOp): number =>
  op.op === 'finish' && op.output !== null ? op.output.text.length : 200;
export const MAX_TICK_BYTES = 8 * 1024 * 1024;

/**
 * Whether an op ends the session's hold on its slot: a finish, or the
 * cancel of a running session.
 *
 * @example
 * ```ts
 * endsHold({ op: 'cancel', expected: { status: 'running' } } as TickOp) // => true
 * ```
 */
export const endsHold = (op: TickOp): op is TickFinish | TickCancel =>
  op.op === 'finish' || (op.op === 'cancel' && op.expected.status === 'running');

/**
 * Whether an op is about a run under way (a handle, a finish, the cancel
 * of a running session): its session was granted, so no op still waiting
 * is one it depends on; it frees a slot, or goes with one that is busy.
 *
 * @example
 * ```ts
 * runOp({ op: 'finish' } as TickOp) // => true
 * runOp({ op: 'handle' } as TickOp) // => true
 * runOp({ op: 'cancel', expected: { status: 'queued' } } as TickOp) // => false
 * runOp({ op: 'enqueue' } as TickOp) // => false
 * ```
 */
export const runOp = (op: TickOp): boolean => op.op === 'handle' || endsHold(op);
