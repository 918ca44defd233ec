/**
 * Exit reasons, in OTP's vocabulary.
 *
 * An XState actor exits when its snapshot becomes `done` (reason from its
 * output, `normal` by default), `error` (abnormal, `{ error }`), or it is
 * stopped by a supervisor (`shutdown`, or `killed` once its deadline passed).
 */

/**
 * Why an actor exited. `{ error }` carries a thrown value, or any exit term
 * that is none of the other shapes (abnormal, as any such reason is in OTP).
 */
export type ExitReason =
  | 'normal'
  | 'shutdown'
  | { shutdown: unknown }
  | 'killed'
  | 'noproc'
  | { error: unknown };

/**
 * True for the exits OTP calls normal: `normal`, `shutdown` and
 * `{ shutdown: detail }`, and for nothing else, as in OTP: a transient
 * child is restarted on any other reason. The one place that decides it.
 *
 * @example
 * ```ts
 * isCleanExit('normal') // => true
 * isCleanExit('shutdown') // => true
 * isCleanExit({ shutdown: 'drained' }) // => true
 * isCleanExit('killed') // => false
 * isCleanExit('noproc') // => false
 * isCleanExit({ error: new Error('boom') }) // => false
 * isCleanExit({ error: 'crash' }) // => false
 * ```
 */
export function isCleanExit(reason: ExitReason): boolean {
  if (reason === 'normal' || reason === 'shutdown') return true;
  // Checked on the value, not the type: a reason can come from outside
  // (an output, the inspector), and only `{ shutdown }` alone is clean.
  return (
    typeof reason === 'object' && reason !== null && 'shutdown' in reason && !('error' in reason)
  );
}

/**
 * Reads any exit term as an `ExitReason`. The known shapes are kept; any
 * other term is abnormal, as any OTP reason other than `normal`, `shutdown`
 * and `{shutdown, _}` is, and is kept as `{ error: term }` so it is shown.
 *
 * @example
 * ```ts
 * toExitReason('normal') // => 'normal'
 * toExitReason('killed') // => 'killed'
 * toExitReason('noproc') // => 'noproc'
 * toExitReason({ shutdown: 'drained' }) // => { shutdown: 'drained' }
 * toExitReason({ error: 'bad row' }) // => { error: 'bad row' }
 * toExitReason('crash') // => { error: 'crash' }
 * toExitReason({ code: 3 }) // => { error: { code: 3 } }
 * toExitReason(null) // => { error: null }
 * isCleanExit(toExitReason('crash')) // => false
 * ```
 */
export function toExitReason(term: unknown): ExitReason {
  if (term === 'normal' || term === 'shutdown' || term === 'killed' || term === 'noproc')
    return term;
  if (typeof term === 'object' && term !== null) {
    if ('shutdown' in term && !('error' in term))
      return { shutdown: (term as { shutdown: unknown }).shutdown };
    if ('error' in term) return { error: (term as { error: unknown }).error };
  }
  return { error: term };
}

/**
 * Reads the exit reason a `done` actor chose. The convention: an output
 * `{ exit: reason }` names the reason (read by `toExitReason`, so an
 * unknown one is abnormal); an output with no `exit` (or `exit: undefined`)
 * is a result, and the exit is `normal`.
 *
 * @example
 * ```ts
 * exitReasonFromOutput(undefined) // => 'normal'
 * exitReasonFromOutput({ result: 42 }) // => 'normal'
 * exitReasonFromOutput({ exit: undefined }) // => 'normal'
 * exitReasonFromOutput({ exit: 'shutdown' }) // => 'shutdown'
 * exitReasonFromOutput({ exit: { shutdown: 'drained' } }) // => { shutdown: 'drained' }
 * exitReasonFromOutput({ exit: { error: 'bad row' } }) // => { error: 'bad row' }
 * exitReasonFromOutput({ exit: 'crash' }) // => { error: 'crash' }
 * exitReasonFromOutput({ exit: 'sideways' }) // => { error: 'sideways' }
 * ```
 */
export function exitReasonFromOutput(output: unknown): ExitReason {
  if (typeof output !== 'object' || output === null || !('exit' in output)) return 'normal';
  const exit = (output as { exit: unknown }).exit;
  return exit === undefined ? 'normal' : toExitReason(exit);
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
