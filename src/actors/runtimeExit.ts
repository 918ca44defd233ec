/**
 * Why a runtime's tree ended, decided from what the root said before it
 * exited and whether `stop()` or `kill()` asked for it. Pure: the runtime
 * feeds the root's events to `noteRootEvent` and classifies once, in the
 * root's exit callback (src/actors/runtime.ts).
 */
import { BoardStoppedError } from '../board/boardCommandError.js';
import type { SupervisorEvent } from '../supervisor/events.js';
import { describeExitReason, type ExitReason, isCleanExit } from '../supervisor/exitReason.js';

/**
 * Why a runtime's tree ended (`runtime.exited`): `stopped` by `stop()`,
 * `killed` by `kill()`, or `gave_up`: the root supervisor's children crashed
 * more often than its intensity allows (3 restarts in 5 s), so it stopped
 * them all and exited on its own. Nothing restarts a root: whoever runs the
 * runtime must treat `gave_up` as fatal (the CLI exits with code 5).
 */
export type RuntimeExit =
  | { kind: 'stopped' }
  | { kind: 'killed' }
  | {
      kind: 'gave_up';
      /** The root's own exit reason. */
      reason: ExitReason;
      /** The last child crash the root saw before it gave up, if any. */
      lastCrash: { childId: string; reason: ExitReason } | null;
      /** The intensity that was reached (null if the root exited without reporting it). */
      intensity: { restarts: number; periodMs: number } | null;
    };

/** Who ended the tree on purpose: `stop()` or `kill()`. */
export type RuntimeEnding = 'stop' | 'kill';

/** What the root said before it exited: its last child crash and the intensity it reached. */
export type RootCrashes = Pick<
  Extract<RuntimeExit, { kind: 'gave_up' }>,
  'lastCrash' | 'intensity'
>;

/** Nothing seen yet. */
export const NO_CRASHES: RootCrashes = { lastCrash: null, intensity: null };

/**
 * `seen` after one of the tree's events: only the root's own (`rootId`)
 * count, a clean child exit is no crash.
 *
 * @example
 * ```ts
 * const crash = { type: 'roundtable.child.exited', supervisorId: 'root', childId: 'runnerPool', reason: 'killed' };
 * noteRootEvent(NO_CRASHES, crash, 'root') // => { lastCrash: { childId: 'runnerPool', reason: 'killed' }, intensity: null }
 * noteRootEvent(NO_CRASHES, { ...crash, reason: 'normal' }, 'root') // => NO_CRASHES
 * noteRootEvent(NO_CRASHES, { ...crash, supervisorId: 'taskRunners' }, 'root') // => NO_CRASHES
 * noteRootEvent(NO_CRASHES, { type: 'roundtable.supervisor.intensity_reached', supervisorId: 'root', intensity: 3, periodMs: 5000 }, 'root') // => { lastCrash: null, intensity: { restarts: 3, periodMs: 5000 } }
 * ```
 */
export function noteRootEvent(
  seen: RootCrashes,
  event: SupervisorEvent,
  rootId: string,
): RootCrashes {
  if (event.supervisorId !== rootId) return seen;
  if (event.type === 'roundtable.child.exited' && !isCleanExit(event.reason))
    return { ...seen, lastCrash: { childId: event.childId, reason: event.reason } };
  if (event.type === 'roundtable.supervisor.intensity_reached')
    return { ...seen, intensity: { restarts: event.intensity, periodMs: event.periodMs } };
  return seen;
}

/**
 * The exit `stop()` or `kill()` asked for.
 *
 * @example
 * ```ts
 * endedExit('stop') // => { kind: 'stopped' }
 * endedExit('kill') // => { kind: 'killed' }
 * ```
 */
export function endedExit(ending: RuntimeEnding): RuntimeExit {
  return ending === 'stop' ? { kind: 'stopped' } : { kind: 'killed' };
}

/**
 * The exit of a root that exited with `reason`: whatever `stop()` or
 * `kill()` asked for, else the root giving up.
 *
 * @example
 * ```ts
 * classifyExit('stop', 'shutdown', NO_CRASHES) // => { kind: 'stopped' }
 * classifyExit('kill', 'killed', NO_CRASHES) // => { kind: 'killed' }
 * classifyExit(undefined, 'shutdown', NO_CRASHES) // => { kind: 'gave_up', reason: 'shutdown', lastCrash: null, intensity: null }
 * ```
 */
export function classifyExit(
  ending: RuntimeEnding | undefined,
  reason: ExitReason,
  seen: RootCrashes,
): RuntimeExit {
  if (ending !== undefined) return endedExit(ending);
  return { kind: 'gave_up', reason, ...seen };
}

/**
 * One line for logs.
 *
 * @example
 * ```ts
 * describeRuntimeExit({ kind: 'stopped' }) // => 'stopped'
 * describeRuntimeExit({ kind: 'gave_up', reason: 'shutdown', lastCrash: { childId: 'runnerPool', reason: 'killed' }, intensity: { restarts: 3, periodMs: 5000 } }) // => 'the root supervisor gave up: more than 3 restarts in 5000 ms, the last one runnerPool (killed)'
 * describeRuntimeExit({ kind: 'gave_up', reason: 'shutdown', lastCrash: null, intensity: null }) // => 'the root supervisor gave up: shutdown'
 * ```
 */
export function describeRuntimeExit(exit: RuntimeExit): string {
  if (exit.kind !== 'gave_up') return exit.kind;
  const crash = exit.lastCrash
    ? `, the last one ${exit.lastCrash.childId} (${describeExitReason(exit.lastCrash.reason)})`
    : '';
  return exit.intensity
    ? `the root supervisor gave up: more than ${exit.intensity.restarts} restarts in ${exit.intensity.periodMs} ms${crash}`
    : `the root supervisor gave up: ${describeExitReason(exit.reason)}${crash}`;
}

/**
 * `runtime.booted` rejects with it when the tree ends before the first boot
 * pass succeeded; so do `reconcile()`, and a command that did not commit
 * because `stop()` or `kill()` came first (called after either, or its
 * write still waiting when the node's I/O stopped). `applied` says what a
 * command's caller may assume: `no` when its write was never sent, `maybe`
 * when a tick carrying it failed as the node stopped (a commit whose reply
 * was lost looks the same: submit again with the same `key`); `null` for
 * `booted` and `reconcile()`.
 *
 * @example
 * ```ts
 * new RuntimeStoppedError({ kind: 'killed' }).message // => 'the runtime ended before its boot pass: killed'
 * new RuntimeStoppedError({ kind: 'stopped' }).code // => 'RUNTIME_STOPPED'
 * new RuntimeStoppedError({ kind: 'stopped' }).applied // => null
 * commandStopped('stop', 'enqueue', false).message // => 'the runtime is stopped: enqueue was not applied'
 * commandStopped('kill', 'enqueue', true).message // => 'the runtime was killed: enqueue may have been applied (submit again with the same key to be sure)'
 * commandStopped('stop', 'cancel', true).applied // => 'maybe'
 * ```
 */
export class RuntimeStoppedError extends BoardStoppedError {
  override readonly name = 'RuntimeStoppedError';
  readonly code = 'RUNTIME_STOPPED';
  constructor(
    readonly exit: RuntimeExit,
    message = `the runtime ended before its boot pass: ${describeRuntimeExit(exit)}`,
    readonly applied: 'no' | 'maybe' | null = null,
  ) {
    super(message);
  }
}

/** What a command (`op`) is answered once `ending` came before its commit; `sent`: a tick carried it. */
export function commandStopped(
  ending: RuntimeEnding,
  op: string,
  sent: boolean,
): RuntimeStoppedError {
  const head = `${ending === 'stop' ? 'the runtime is stopped' : 'the runtime was killed'}: ${op}`;
  const check =
    op === 'enqueue' ? 'submit again with the same key to be sure' : 'read the task back to see';
  return sent
    ? new RuntimeStoppedError(
        endedExit(ending),
        `${head} may have been applied (${check})`,
        'maybe',
      )
    : new RuntimeStoppedError(endedExit(ending), `${head} was not applied`, 'no');
}
