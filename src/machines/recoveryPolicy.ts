/**
 * The recovery policy: a running session lost its owner (a deploy, a crash).
 * Adopt the run that may still be going, or fail it so it can be re-queued?
 *
 * Pure; the Reconciler gathers the facts and acts on the answer.
 */

/** Where a run lives. Every kind can be found again after a restart (a local run is a detached process). */
export type BackendKind = 'swarm' | 'docker' | 'local' | 'simulated';

/** What the run is for. A bootstrap run prepares a workspace and is cheap to redo. */
export type SessionKind = 'run' | 'bootstrap';

/** Whether the run's container is there, as far as the engine could tell. */
export type Presence = 'present' | 'absent' | 'unknown';

export interface RecoveryFacts {
  backend: BackendKind;
  kind: SessionKind;
  /** Service or container name; null when the owner died before recording it. */
  handle: string | null | undefined;
  presence: Presence;
}

export type RecoveryAction = 'adopt' | 'fail';

/**
 * Decides what to do with a running session whose owner is gone. A local
 * run is a detached process that outlives its node, found again by pid and
 * start time, so it is adopted like a container; a bootstrap run is never worth adopting; with
 * no handle there is nothing to find; only a container seen present is
 * adopted. `unknown` fails too: adoption needs a container we can poll, and
 * the failure is user-recoverable, so the work is re-queued rather than lost.
 *
 * @example
 * ```ts
 * recoveryAction({ backend: 'swarm', kind: 'run', handle: 'rt-s1', presence: 'present' }) // => 'adopt'
 * recoveryAction({ backend: 'local', kind: 'run', handle: 'rt-s1:4242.45565.2d47ad76', presence: 'present' }) // => 'adopt'
 * recoveryAction({ backend: 'local', kind: 'run', handle: 'rt-s1:4242.45565.2d47ad76', presence: 'absent' }) // => 'fail'
 * recoveryAction({ backend: 'swarm', kind: 'bootstrap', handle: 'rt-s1', presence: 'present' }) // => 'fail'
 * recoveryAction({ backend: 'swarm', kind: 'run', handle: null, presence: 'present' }) // => 'fail'
 * recoveryAction({ backend: 'docker', kind: 'run', handle: 'rt-s1', presence: 'absent' }) // => 'fail'
 * recoveryAction({ backend: 'simulated', kind: 'run', handle: 'rt-s1', presence: 'unknown' }) // => 'fail'
 * ```
 */
export function recoveryAction(facts: RecoveryFacts): RecoveryAction {
  if (facts.kind === 'bootstrap') return 'fail';
  if (facts.handle === null || facts.handle === undefined || facts.handle === '') return 'fail';
  if (facts.presence === 'present') return 'adopt';
  return 'fail';
}
