/**
 * How much room a tick asks for, and whether the next tick must ask again:
 * pure, over the counts the dispatcher keeps, so the rule that no freed
 * slot goes unasked for is tested without a clock or a database.
 */
import type { TickInput, TickOp } from '../db/tickTypes.js';
import { endsHold } from './dispatcherBatch.js';

/** The counts a tick's room is computed from. */
export interface RoomCounts {
  /** Most sessions this node runs at once. */
  localMax: number;
  /** Sessions it holds now. */
  held: number;
  /** Grants asked for by ticks in flight: room not to ask for twice. */
  reserved: number;
}

/**
 * The grants to ask for: the node's room less what it holds and what ticks
 * in flight asked for already, plus the slots `freed` by the tick's own
 * finishes (the function applies them before it grants).
 *
 * @example
 * ```ts
 * roomToAsk({ localMax: 4, held: 1, reserved: 2 }) // => 1
 * roomToAsk({ localMax: 4, held: 4, reserved: 0 }, 1) // => 1
 * roomToAsk({ localMax: 4, held: 2, reserved: 3 }) // => 0
 * ```
 */
export function roomToAsk(c: RoomCounts, freed = 0): number {
  return Math.max(0, c.localMax - c.held - c.reserved + freed);
}

/**
 * How many of `ops` end a hold this node has: their slots are free before the tick grants.
 *
 * @example
 * ```ts
 * const finish = (sessionId) => ({ op: 'finish', sessionId });
 * freedBy([finish('s1'), finish('s2')], new Set(['s1'])) // => 1
 * ```
 */
export function freedBy(ops: readonly TickOp[], held: { has(sessionId: string): boolean }): number {
  let freed = 0;
  for (const op of ops) if (endsHold(op) && held.has(op.sessionId)) freed += 1;
  return freed;
}

/**
 * Whether the tick after this one (`input`, granted `granted`) must ask for
 * room again. A tick that filled its want may have left more for us; one
 * that did not found nothing. New work or freed slots riding a tick that
 * asked for no room (the room was asked for by a tick out at the same time,
 * which decided before this one committed) are not seen by any grant yet:
 * ask again. Freed slots count whoever held them: a dead node's runs failed
 * by the Reconciler free the global cap, not this node's room.
 *
 * @example
 * ```ts
 * asksAgain({ want: 2, ops: [] }, 2) // => true
 * asksAgain({ want: 2, ops: [] }, 1) // => false
 * asksAgain({ want: 0, ops: [] }, 0) // => false
 * asksAgain({ want: 0, ops: [{ op: 'finish' }] }, 0) // => true
 * asksAgain({ want: 0, ops: [{ op: 'cancel', expected: { status: 'running' } }] }, 0) // => true
 * asksAgain({ want: 0, ops: [{ op: 'cancel', expected: { status: 'queued' } }] }, 0) // => false
 * asksAgain({ want: 0, ops: [{ op: 'handle' }] }, 0) // => false
 * ```
 */
export function asksAgain(input: Pick<TickInput, 'want' | 'ops'>, granted: number): boolean {
  const newWork = input.ops.some(
    (op) => op.op === 'enqueue' || op.op === 'retry' || op.op === 'cap' || endsHold(op),
  );
  return (input.want > 0 || newWork) && granted >= input.want;
}
