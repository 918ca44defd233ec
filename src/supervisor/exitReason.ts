/**
 * Exit reasons, in OTP's vocabulary.
 *
 * An XState actor exits when its snapshot becomes `done` (reason from its
 * output, `normal` by default), `error` (abnormal, `{ error }`), or it is
 * stopped by a supervisor (`shutdown`, or `killed` once its deadline passed).
 */

/** Why an actor exited. `{ error }` is the only shape that carries a thrown value. */
export type ExitReason =
  | 'normal'
  | 'shutdown'
  | { shutdown: unknown }
  | 'killed'
  | 'noproc'
  | { error: unknown };

/**
 * True for the exits OTP calls normal: `normal`, `shutdown` and
 * `{ shutdown: detail }`. A transient child is restarted on anything else.
 *
 * @example
 * ```ts
 * isCleanExit('normal') // => true
 * isCleanExit('shutdown') // => true
 * isCleanExit({ shutdown: 'drained' }) // => true
 * isCleanExit('killed') // => false
 * isCleanExit({ error: new Error('boom') }) // => false
 * ```
 */
export function isCleanExit(reason: ExitReason): boolean {
  return (
    reason === 'normal' ||
    reason === 'shutdown' ||
    (typeof reason === 'object' && 'shutdown' in reason)
  );
}

/**
 * Reads the exit reason a `done` actor chose. The convention: an output
 * `{ exit: reason }` names the reason; any other output is a `normal` exit.
 *
 * @example
 * ```ts
 * exitReasonFromOutput(undefined) // => 'normal'
 * exitReasonFromOutput({ result: 42 }) // => 'normal'
 * exitReasonFromOutput({ exit: 'shutdown' }) // => 'shutdown'
 * exitReasonFromOutput({ exit: { shutdown: 'drained' } }) // => { shutdown: 'drained' }
 * exitReasonFromOutput({ exit: { error: 'bad row' } }) // => { error: 'bad row' }
 * exitReasonFromOutput({ exit: 'sideways' }) // => 'normal'
 * ```
 */
export function exitReasonFromOutput(output: unknown): ExitReason {
  if (typeof output !== 'object' || output === null || !('exit' in output)) return 'normal';
  const exit = (output as { exit: unknown }).exit;
  if (exit === 'normal' || exit === 'shutdown' || exit === 'killed') return exit;
  if (typeof exit === 'object' && exit !== null) {
    if ('shutdown' in exit) return { shutdown: (exit as { shutdown: unknown }).shutdown };
    if ('error' in exit) return { error: (exit as { error: unknown }).error };
  }
  return 'normal';
}

/**
 * A short human label for logs and events.
 *
 * @example
 * ```ts
 * describeExitReason('killed') // => 'killed'
 * describeExitReason({ shutdown: 'drained' }) // => 'shutdown: drained'
 * describeExitReason({ error: new Error('boom') }) // => 'error: boom'
 * ```
 */
export function describeExitReason(reason: ExitReason): string {
  if (typeof reason === 'string') return reason;
  if ('shutdown' in reason) return `shutdown: ${String(reason.shutdown)}`;
  const e = reason.error;
  return `error: ${e instanceof Error ? e.message : String(e)}`;
}
