/**
 * The pure decisions a supervisor takes when a child exits: restart it or
 * not, which siblings go with it, and whether the supervisor itself ends.
 */
import { type ExitReason, isCleanExit } from './exitReason.js';

/** OTP restart types. */
export type RestartType = 'permanent' | 'transient' | 'temporary';
/** OTP strategies. A dynamic supervisor is `one_for_one` with `startChild`. */
export type Strategy = 'one_for_one' | 'one_for_all' | 'rest_for_one';
/** OTP's `auto_shutdown`. */
export type AutoShutdown = 'never' | 'any_significant' | 'all_significant';

/**
 * OTP's rule: permanent always restarts, temporary never, transient only on
 * an abnormal exit.
 *
 * @example
 * ```ts
 * shouldRestart('permanent', 'normal') // => true
 * shouldRestart('transient', 'normal') // => false
 * shouldRestart('transient', { shutdown: 'done' }) // => false
 * shouldRestart('transient', 'killed') // => true
 * shouldRestart('temporary', { error: 'boom' }) // => false
 * ```
 */
export function shouldRestart(restart: RestartType, reason: ExitReason): boolean {
  if (restart === 'permanent') return true;
  if (restart === 'temporary') return false;
  return !isCleanExit(reason);
}

/**
 * The children to restart, in start order, when `failed` exits abnormally.
 *
 * @example
 * ```ts
 * childrenToRestart('one_for_one', ['a', 'b', 'c'], 'b') // => ['b']
 * childrenToRestart('one_for_all', ['a', 'b', 'c'], 'b') // => ['a', 'b', 'c']
 * childrenToRestart('rest_for_one', ['a', 'b', 'c'], 'b') // => ['b', 'c']
 * childrenToRestart('rest_for_one', ['a', 'b', 'c'], 'x') // => []
 * ```
 */
export function childrenToRestart(
  strategy: Strategy,
  order: readonly string[],
  failed: string,
): string[] {
  const at = order.indexOf(failed);
  if (at < 0) return [];
  if (strategy === 'one_for_one') return [failed];
  if (strategy === 'one_for_all') return [...order];
  return order.slice(at);
}

/**
 * After a significant child exited for good: does the supervisor shut down?
 * `stillAlive` counts the other significant children that are running or
 * about to restart.
 *
 * @example
 * ```ts
 * autoShutdownNow('never', 0) // => false
 * autoShutdownNow('any_significant', 2) // => true
 * autoShutdownNow('all_significant', 1) // => false
 * autoShutdownNow('all_significant', 0) // => true
 * ```
 */
export function autoShutdownNow(mode: AutoShutdown, stillAlive: number): boolean {
  if (mode === 'never') return false;
  if (mode === 'any_significant') return true;
  return stillAlive === 0;
}
