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

/**
 * Whether the run's container is there, as far as the engine could tell.
 * `unobservable`: this node cannot look at all (a local run of a node on
 * another machine: its pid and files are that machine's), which says
 * nothing about the run, unlike `absent`.
 */
export type Presence = 'present' | 'absent' | 'unknown' | 'unobservable';

export interface RecoveryFacts {
  backend: BackendKind;
  kind: SessionKind;
  /** Service or container name; null when the owner died before recording it. */
  handle: string | null | undefined;
  presence: Presence;
  /** How long this node has seen the run `unobservable` in a row (0 or absent: just now). */
  unobservableForMs?: number;
  /**
   * Only for a run found by its session's name because the row has no
   * handle (the owner died between `start` and recording it): whether the
   * command began there (its output file or marker exists). Absent for a
   * recorded handle: `start` returned, so it did.
   */
  begun?: boolean;
}

/**
 * `wait`: leave the row as it is and look again at the next pass.
 * `discard`: remove the container first (the command never began in it, and
 * nobody will begin it), then fail and re-queue: the new attempt is the
 * only one that runs.
 */
export type RecoveryAction = 'adopt' | 'fail' | 'wait' | 'discard';

/**
 * How long a run nobody here can observe is left to its owner's restart
 * (on its own machine, where it can be observed and adopted) before it is
 * failed as lost: 15 minutes, a slow host reboot or redeploy.
 */
export const UNOBSERVABLE_GRACE_MS = 15 * 60 * 1000;

/**
 * The failure reason of a run given up on; says so when it was never seen, only waited for.
 *
 * @example
 * ```ts
 * recoveryFailReason('absent') // => 'owner_lost'
 * recoveryFailReason('unobservable').startsWith('owner_lost: the run could not be observed') // => true
 * ```
 */
export function recoveryFailReason(presence: Presence): string {
  return presence === 'unobservable'
    ? 'owner_lost: the run could not be observed from this node (another machine) within the grace'
    : 'owner_lost';
}

/**
 * Decides what to do with a running session whose owner is gone. A run
 * whose handle was never recorded is looked for by name first (`begun` says
 * what was found): one whose command began is adopted like any other, one
 * whose container came up with no command in it is discarded, so that a
 * re-queued attempt never runs next to the first (a node killed between
 * `start` and the handle's write left exactly that: two execs). A local
 * run is a detached process that outlives its node, found again by pid and
 * start time, so it is adopted like a container; a bootstrap run is never worth adopting; with
 * no handle there is nothing to find; only a container seen present is
 * adopted. `unknown` fails too: adoption needs a container we can poll, and
 * the failure is user-recoverable, so the work is re-queued rather than lost.
 * `unobservable` is not evidence of anything: wait for the owner to come
 * back for it, up to `UNOBSERVABLE_GRACE_MS`, then fail (the run may still
 * be going over there: the re-queued attempt can then run twice, which the
 * grace makes a rare, documented, bounded cost rather than the rule).
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
 * recoveryAction({ backend: 'local', kind: 'run', handle: 'rt-s1:1.2.ab@L3Q', presence: 'unobservable' }) // => 'wait'
 * recoveryAction({ backend: 'local', kind: 'run', handle: 'rt-s1:1.2.ab@L3Q', presence: 'unobservable', unobservableForMs: 899999 }) // => 'wait'
 * recoveryAction({ backend: 'local', kind: 'run', handle: 'rt-s1:1.2.ab@L3Q', presence: 'unobservable', unobservableForMs: 900000 }) // => 'fail'
 * recoveryAction({ backend: 'local', kind: 'bootstrap', handle: 'rt-s1:1.2.ab@L3Q', presence: 'unobservable' }) // => 'fail'
 * recoveryAction({ backend: 'swarm', kind: 'run', handle: 'rt-s1', presence: 'present', begun: true }) // => 'adopt'
 * recoveryAction({ backend: 'swarm', kind: 'run', handle: 'rt-s1', presence: 'present', begun: false }) // => 'discard'
 * recoveryAction({ backend: 'swarm', kind: 'run', handle: 'rt-s1', presence: 'absent', begun: false }) // => 'fail'
 * ```
 */
export function recoveryAction(facts: RecoveryFacts): RecoveryAction {
  if (facts.kind === 'bootstrap') return 'fail';
  if (facts.handle === null || facts.handle === undefined || facts.handle === '') return 'fail';
  if (facts.presence === 'present') return facts.begun === false ? 'discard' : 'adopt';
  if (facts.presence === 'unobservable') {
    return (facts.unobservableForMs ?? 0) < UNOBSERVABLE_GRACE_MS ? 'wait' : 'fail';
  }
  return 'fail';
}
