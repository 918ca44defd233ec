/**
 * The Reconciler's leader: on a Postgres server one node's Reconciler acts
 * for the cluster, the one holding the leader lock (src/db/leaderLock.ts);
 * the others wait for the lock. A follower runs no passes of its own: the
 * leader's liveness watch hears every DOWN and runs the pass. When the
 * leader dies the server frees the lock and grants it to a waiting follower
 * within a round trip; the new leader runs a pass at once (a takeover), so
 * the dead leader's own runs, and anything its last pass left half done,
 * are handled within a second of the death.
 *
 * A leader wedged with its connection open (a paused process, a socket the
 * server has not noticed is dead) still holds the lock. So after each wait
 * that times out a follower asks the liveness decision about the boot
 * leading (named in its connection's `application_name`); a leader judged
 * dead (its boot lock gone, its beats stale) is deposed: its lock session
 * is ended with `pg_terminate_backend` and a follower leads. A deposed
 * leader that resumes is harmless: its pass was aborted when its lock
 * connection went, and whatever write it had in flight carries the epoch it
 * read, which the new leader's adopt or re-queue has moved on, so the
 * compare-and-set refuses it.
 */
import {
  bootLockKey,
  type Db,
  type DbHandle,
  deposeLeader,
  type LeaderLock,
  type LeaderState,
  leaderBackend,
} from '../db/index.js';
import type { ClusterLiveness } from './clusterLiveness.js';

/** What the Reconciler asks: the leadership it may run a pass under, if any. */
export interface LeaderPort {
  /** The current leadership's signal (aborted when it ends); null when this node does not lead. */
  leadership(): AbortSignal | null;
  state(): LeaderState | 'none';
}

/** The connection name of a leader: its owner's boot lock key, which other nodes map back to the owner. */
export function leaderName(owner: string): string {
  return `roundtable-leader:${bootLockKey(owner)}`;
}

/**
 * The boot lock key a leader's connection name carries, or null.
 *
 * @example
 * ```ts
 * leaderKeyOf('roundtable-leader:12345') // => 12345
 * leaderKeyOf('roundtable') // => null
 * leaderKeyOf('roundtable-leader:x') // => null
 * ```
 */
export function leaderKeyOf(name: string): number | null {
  const m = /^roundtable-leader:(\d{1,10})$/.exec(name);
  return m === null ? null : Number(m[1]);
}

export interface ReconcilerLeaderOptions {
  hold: NonNullable<DbHandle['holdLeaderLock']>;
  db: Db;
  owner: string;
  cluster: ClusterLiveness;
  /** A pass at once: this node has just started leading. */
  tick(): void;
  /** Leadership changed (for the logs). */
  onState?(state: LeaderState): void;
  onError(error: unknown): void;
  track<T>(work: Promise<T>): Promise<T>;
}

/** Takes or waits for the leader lock; resolves once this node knows whether it leads. */
export async function startReconcilerLeader(
  o: ReconcilerLeaderOptions,
): Promise<LeaderPort & { release(): Promise<void>; drop(): void }> {
  let deposing = false;
  /** A follower's look at the leader after a wait: depose it if the liveness decision says it is dead. */
  const depose = () => {
    if (deposing) return;
    deposing = true;
    void o
      .track(
        (async () => {
          const backend = await leaderBackend(o.db);
          const key = backend === null ? null : leaderKeyOf(backend.name);
          if (backend === null || key === null) return;
          const leader = (await o.cluster.nodes()).find((n) => bootLockKey(n.owner) === key);
          if (leader === undefined || leader.self || leader.liveness !== 'dead') return;
          await deposeLeader(o.db, backend.pid);
        })(),
      )
      .catch(o.onError)
      .finally(() => {
        deposing = false;
      });
  };
  const lock: LeaderLock = await o.hold(
    leaderName(o.owner),
    (state) => {
      o.onState?.(state);
      if (state === 'leader') o.tick();
    },
    depose,
  );
  // Leading from the first try: the boot pass is already on its way.
  return {
    leadership: () => lock.leadership(),
    state: () => lock.state(),
    release: () => lock.release(),
    drop: () => lock.drop(),
  };
}
