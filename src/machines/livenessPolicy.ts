/**
 * The liveness decision: is the boot written as a running row's owner still
 * alive, so that its run must be left alone, or gone, so that one node may
 * adopt or re-queue it?
 *
 * Two independent ways to notice a death, as in the adopt policy: the boot
 * lock is the precise one (every boot holds a session-level advisory lock on
 * a connection of its own; the server drops it the moment the process dies),
 * and the heartbeat row is the backstop for when the lock cannot be trusted
 * (a transaction pooler, PGlite, a lock read that failed) or says nothing
 * useful (a process wedged with its connection open, a socket cut without a
 * FIN: the server still holds the lock, the beats stop).
 *
 * And a node that cannot prove it is alive itself (its own lock connection
 * broke) judges nobody: it might be the one cut off, and adopting from a
 * cluster it cannot see would take runs from live owners.
 *
 * Pure: no clock, no I/O. The caller reads the rows, `pg_locks` and its clock.
 */

/** The owner's boot lock as `pg_locks` shows it; `unknown` when there is no trustworthy reading. */
export type LockEvidence = 'held' | 'released' | 'unknown';

/** This boot's own lock connection: `held` (provably alive), `lost` or `busy` (it cannot prove it), `none` (lock liveness off). */
export type SelfLock = 'held' | 'lost' | 'busy' | 'none';

/** Everything the decision looks at, for one owner other than this boot. */
export interface OwnerEvidence {
  /** The owner is an earlier boot of this very node: this boot replaced it (`isReplacedBoot`). */
  sameNode: boolean;
  /** Milliseconds since the owner's last beat; null when it has no row (stopped on purpose, pruned, never beat). */
  beatAgeMs: number | null;
  /** A later boot of the owner's node has beaten since the owner started (a deploy). */
  replaced: boolean;
  lock: LockEvidence;
  /** How long a beat vouches for its owner (`heartbeatMs * staleBeats`). */
  staleAfterMs: number;
  self: SelfLock;
}

/** Why an owner counts as gone. */
export type DeathReason = 'same_node' | 'replaced' | 'no_beat' | 'lock_released' | 'beat_stale';

/**
 * The verdict and what to do: `leave` the owner's runs, `take_over` them
 * (adopt what can be adopted, fail and re-queue the rest), or `wait` (this
 * node cannot judge now; the next look decides).
 */
export type LivenessVerdict =
  | { owner: 'alive'; act: 'leave' }
  | { owner: 'dead'; reason: DeathReason; act: 'take_over' }
  | { owner: 'unknown'; act: 'wait' };

/**
 * Whether `owner` counts as another boot of this very node that this boot
 * replaced (`OwnerEvidence.sameNode`): its node id is this node's and it did
 * not start after this boot. A boot of this node that started later replaced
 * this one (a start-first deploy, or a second machine wrongly given the same
 * `nodeId`): it is not judged dead for that, or the two boots would each
 * take the other's runs and end the other's leader lock, back and forth, for
 * as long as both live. Without the owner's row (`ownerStartedAt` null) its
 * start is unknown: the same node's id is enough, as before.
 *
 * @example
 * ```ts
 * const e = { ownerNode: 'n1', nodeId: 'n1', ownerStartedAt: 1_000, selfStartedAt: 2_000 };
 * isReplacedBoot(e) // => true
 * isReplacedBoot({ ...e, ownerStartedAt: 3_000 }) // => false
 * isReplacedBoot({ ...e, ownerStartedAt: null }) // => true
 * isReplacedBoot({ ...e, selfStartedAt: null }) // => true
 * isReplacedBoot({ ...e, ownerNode: 'n2' }) // => false
 * ```
 */
export function isReplacedBoot(e: {
  ownerNode: string;
  nodeId: string;
  ownerStartedAt: number | null;
  selfStartedAt: number | null;
}): boolean {
  if (e.ownerNode !== e.nodeId) return false;
  if (e.ownerStartedAt === null || e.selfStartedAt === null) return true;
  return e.ownerStartedAt <= e.selfStartedAt;
}

/**
 * Decides for one owner. The order says which evidence wins: a replaced or
 * stopped boot is gone whatever its lock says (a deploy is not a crash); a
 * released lock is a death at once, however fresh the last beat (SIGKILL);
 * a held lock does not save an owner whose beats stopped (wedged, or a
 * socket the server has not noticed is dead).
 *
 * Throws a `RangeError` naming the argument when `beatAgeMs` is NaN or
 * `staleAfterMs` is not a positive number.
 *
 * @example
 * ```ts
 * const e = { sameNode: false, beatAgeMs: 100, replaced: false, lock: 'held', staleAfterMs: 3000, self: 'held' };
 * livenessVerdict(e) // => { owner: 'alive', act: 'leave' }
 * livenessVerdict({ ...e, lock: 'released' }) // => { owner: 'dead', reason: 'lock_released', act: 'take_over' }
 * livenessVerdict({ ...e, beatAgeMs: 3001 }) // => { owner: 'dead', reason: 'beat_stale', act: 'take_over' }
 * livenessVerdict({ ...e, lock: 'unknown', self: 'none' }) // => { owner: 'alive', act: 'leave' }
 * livenessVerdict({ ...e, lock: 'unknown', beatAgeMs: 5000, self: 'none' }) // => { owner: 'dead', reason: 'beat_stale', act: 'take_over' }
 * livenessVerdict({ ...e, beatAgeMs: null }) // => { owner: 'dead', reason: 'no_beat', act: 'take_over' }
 * livenessVerdict({ ...e, replaced: true }) // => { owner: 'dead', reason: 'replaced', act: 'take_over' }
 * livenessVerdict({ ...e, sameNode: true }) // => { owner: 'dead', reason: 'same_node', act: 'take_over' }
 * livenessVerdict({ ...e, lock: 'released', self: 'lost' }) // => { owner: 'unknown', act: 'wait' }
 * livenessVerdict({ ...e, self: 'busy' }) // => { owner: 'unknown', act: 'wait' }
 * livenessVerdict({ ...e, beatAgeMs: -20 }) // => { owner: 'alive', act: 'leave' }
 * livenessVerdict({ ...e, beatAgeMs: Number.NaN }) // throws RangeError
 * livenessVerdict({ ...e, staleAfterMs: 0 }) // throws RangeError
 * ```
 */
export function livenessVerdict(e: OwnerEvidence): LivenessVerdict {
  if (e.beatAgeMs !== null && Number.isNaN(e.beatAgeMs))
    throw new RangeError('livenessVerdict: beatAgeMs must be a number or null, got NaN');
  if (!(Number.isFinite(e.staleAfterMs) && e.staleAfterMs > 0))
    throw new RangeError(
      `livenessVerdict: staleAfterMs must be a number > 0, got ${String(e.staleAfterMs)}`,
    );
  if (e.self === 'lost' || e.self === 'busy') return { owner: 'unknown', act: 'wait' };
  const dead = (reason: DeathReason): LivenessVerdict => ({
    owner: 'dead',
    reason,
    act: 'take_over',
  });
  if (e.sameNode) return dead('same_node');
  if (e.replaced) return dead('replaced');
  if (e.beatAgeMs === null) return dead('no_beat');
  if (e.lock === 'released') return dead('lock_released');
  // A beat "from the future" is clock skew between nodes: fresh, not stale.
  if (e.beatAgeMs > e.staleAfterMs) return dead('beat_stale');
  return { owner: 'alive', act: 'leave' };
}

/**
 * The owner's node id: what comes before the last `@` of `node@boot`.
 *
 * @example
 * ```ts
 * nodeOf('a@b1') // => 'a'
 * nodeOf('host.example:1@x') // => 'host.example:1'
 * ```
 */
export function nodeOf(owner: string): string {
  const at = owner.lastIndexOf('@');
  return at < 0 ? owner : owner.slice(0, at);
}

/** A stretch of time (ms since the epoch) in which this node could not read the store. */
export interface Blind {
  from: number;
  to: number;
}

/**
 * How long ago a beat was, not counting the stretches in which this node
 * could not read the store: while the store was out of reach nobody could
 * beat, so an outage longer than the window must not make every other node
 * stale the moment the store answers again. A node that died before or
 * during the outage is still found, once its beats have been missing for a
 * window of the time this node could see.
 *
 * @example
 * ```ts
 * beatAgeOutside(1_000, 10_000, []) // => 9000
 * beatAgeOutside(1_000, 10_000, [{ from: 2_000, to: 9_000 }]) // => 2000
 * beatAgeOutside(1_000, 10_000, [{ from: 0, to: 3_000 }, { from: 8_000, to: 12_000 }]) // => 5000
 * beatAgeOutside(5_000, 4_000, [{ from: 0, to: 9_000 }]) // => -1000
 * ```
 */
export function beatAgeOutside(beatAt: number, now: number, blind: readonly Blind[]): number {
  let unseen = 0;
  for (const b of blind) {
    const from = Math.max(b.from, beatAt);
    const to = Math.min(b.to, now);
    if (to > from) unseen += to - from;
  }
  return now - beatAt - unseen;
}
