/**
 * The dispatcher's outbox entries and how the next tick's batch is cut from
 * them: pure, so the limits are tested without a clock or a database.
 */
import type { TickCancel, TickFinish, TickOp, TickOutcome } from '../db/tickTypes.js';

/** One op waiting for a tick, with its caller's promise. */
export interface Entry {
  op: TickOp;
  at: number;
  /** Send alone: a tick that carried it failed for a reason that is not transient. */
  solo: boolean;
  resolve(outcome: TickOutcome): void;
  reject(error: unknown): void;
}

/** Rough size of an op in a tick's JSON: outputs dominate. */
export const weight = (op: TickOp): number =>
  op.op === 'finish' && op.output !== null ? op.output.text.length : 200;
export const MAX_TICK_BYTES = 8 * 1024 * 1024;

/**
 * The ops of the next tick: a solo op alone, else up to `maxOps` ops and
 * `MAX_TICK_BYTES` of JSON (at least one). Removes them from `pending`.
 */
export function takeBatch(pending: Entry[], maxOps: number): Entry[] {
  const first = pending[0];
  if (first === undefined) return [];
  if (first.solo) return pending.splice(0, 1);
  let n = 0;
  let bytes = 0;
  for (const e of pending) {
    if (e.solo || n >= maxOps) break;
    bytes += weight(e.op);
    if (n > 0 && bytes > MAX_TICK_BYTES) break;
    n += 1;
  }
  return pending.splice(0, n);
}

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
