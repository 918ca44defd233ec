/**
 * OTP's `exit(Pid, Reason)` aimed at a supervised child: the incarnation is
 * stopped at once with that reason, and the supervisor then handles the exit
 * like any other (restart type, intensity, strategy). Unlike
 * `terminateChild`, the spec stays: this is a crash on demand, for operators
 * and tests, not a removal.
 */
import type { ChildRecord } from './ChildTable.js';
import { NoProcError, NotFoundError } from './errors.js';
import type { ExitReason } from './exitReason.js';
import type { Spawned } from './spawnChild.js';
import { recordExitReason } from './watchExit.js';

/** What `exitChild` accepts: an exit reason, or OTP's `kill` (the untrappable one). */
export type ExitSignal = ExitReason | 'kill';

/**
 * The reason the child exits with: OTP turns `kill` into `killed`.
 *
 * @example
 * ```ts
 * exitReasonOfSignal('kill') // => 'killed'
 * exitReasonOfSignal('normal') // => 'normal'
 * exitReasonOfSignal({ shutdown: 'drained' }) // => { shutdown: 'drained' }
 * ```
 */
export function exitReasonOfSignal(signal: ExitSignal): ExitReason {
  return signal === 'kill' ? 'killed' : signal;
}

/**
 * Stops one incarnation now with `reason`. The reason is recorded before the
 * stop so monitors of the actor read it too (a nested supervisor exits with
 * `killed`, whatever we record: its own exit is its own). The incarnation is
 * released by the kill, so its end is not reported again as a new exit: the
 * caller hands `reason` to the restart handling itself.
 *
 * OTP differs on one point: `exit(Pid, normal)` does nothing to a process
 * that does not trap exits. Here the call is an explicit operator action, so
 * every reason, `normal` included, stops the child (the child does not get
 * to trap it either).
 */
export function exitIncarnation(spawned: Spawned, reason: ExitReason): void {
  if (reason !== 'killed') recordExitReason(spawned.ref, reason);
  spawned.kill();
}

/**
 * The supervisor's `exitChild` job, run in its mailbox: exits `child`'s
 * running incarnation, then hands the exit to `handleExit` as if the child
 * had ended by itself (the kill released the incarnation, so its own end is
 * not reported a second time).
 */
export function exitOneChild(
  child: ChildRecord | undefined,
  id: string,
  signal: ExitSignal,
  handleExit: (child: ChildRecord, spawned: Spawned, reason: ExitReason) => void | Promise<void>,
): void | Promise<void> {
  if (!child) throw new NotFoundError(id);
  const spawned = child.spawned;
  if (!spawned) throw new NoProcError(id);
  const reason = exitReasonOfSignal(signal);
  exitIncarnation(spawned, reason);
  return handleExit(child, spawned, reason);
}

/** What the inspector may do to a supervisor it found in the inspection stream. */
export interface ChildExiter {
  readonly id: string;
  exitChild(id: string, reason?: ExitSignal): Promise<void>;
}

// A supervisor's inspection shell is all an inspector sees of it; this maps
// the shell back to the supervisor so an operator can exit a child from the
// page. Weak: a shell that nobody holds is forgotten with its supervisor.
const owners = new WeakMap<object, ChildExiter>();

/** @internal Called by the supervisor that owns `shell`. */
export function registerShell(shell: object, owner: ChildExiter): void {
  owners.set(shell, owner);
}

/** The supervisor whose inspection shell is `shellRef`, if it is one. */
export function supervisorOfShell(shellRef: object): ChildExiter | undefined {
  return owners.get(shellRef);
}
