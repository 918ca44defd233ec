/**
 * When the next tick leaves: once the node has gone one turn of its event
 * loop without handing in a new op, or once the batch is full, or after
 * `maxTurns` turns of ops still arriving. Pure, so the rule is tested
 * without a loop or a clock.
 *
 * Why a turn and not a microtask: a granted run starts, records its handle
 * and, when it is short, finishes over a few turns of the loop, not within
 * one. Sent at the first op, a tick carried the handles of the last grants
 * and left their finishes for the tick after, so every slot lasted two
 * ticks; waiting until the node is idle (nothing new arrived in a whole
 * turn) lets a handle ride with its run's finish (folded into one row
 * write, src/db/tickInput.ts) and the freed slot be granted again in that
 * same tick: one tick per slot cycle. At low load the only op arrives and
 * the next turn finds nothing new, so it leaves one turn later (micro-
 * seconds); under load the batch is what the node produced while it was
 * busy, bounded by `maxTurns` and by `maxOps`.
 */

/** What the dispatcher saw since its outbox had something to send. */
export interface DepartureState {
  /** Turns of the loop waited so far (the first check is after one). */
  turns: number;
  /** Ops waiting now. */
  pending: number;
  /** Ops that were waiting at the previous check. */
  pendingBefore: number;
  /** Most ops one tick carries. */
  maxOps: number;
  /** Most turns to wait while ops keep arriving; 0: leave at the first check. */
  maxTurns: number;
}

/**
 * Whether the tick leaves now.
 *
 * @example
 * ```ts
 * departs({ turns: 1, pending: 3, pendingBefore: 3, maxOps: 500, maxTurns: 8 }) // => true
 * departs({ turns: 1, pending: 5, pendingBefore: 3, maxOps: 500, maxTurns: 8 }) // => false
 * departs({ turns: 8, pending: 9, pendingBefore: 7, maxOps: 500, maxTurns: 8 }) // => true
 * departs({ turns: 2, pending: 500, pendingBefore: 200, maxOps: 500, maxTurns: 8 }) // => true
 * departs({ turns: 1, pending: 5, pendingBefore: 0, maxOps: 500, maxTurns: 0 }) // => true
 * ```
 */
export function departs(s: DepartureState): boolean {
  return s.pending <= s.pendingBefore || s.pending >= s.maxOps || s.turns >= s.maxTurns;
}
