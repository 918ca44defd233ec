/**
 * How a runtime is wired to cluster liveness: which `OwnerLiveness` its
 * Reconciler and runners judge by, what a DOWN does (a Reconciler pass at
 * once), what a lost boot lock does (no grants, said in the logs), and the
 * adopt check a runner makes before it fences an owner. Kept out of
 * runtime.ts so the tree's assembly stays about the tree.
 */
import type { AnyActorRef } from 'xstate';
import type { Db, Session } from '../db/index.js';
import type { DeathReason, SelfLock } from '../machines/livenessPolicy.js';
import type { SupervisorClock } from '../supervisor/clock.js';
import { type BootLockPort, ClusterLiveness } from './clusterLiveness.js';
import type { OwnerLiveness } from './ownerLiveness.js';
import { type LeaderPort, startReconcilerLeader } from './reconcilerLeader.js';
import { type HeartbeatOptions, heartbeatLiveness } from './runtimeHeartbeat.js';

/** This boot cannot prove it is alive: its boot lock is gone. It takes no grants until it holds it again. */
export class BootLockLostError extends Error {
  override readonly name = 'BootLockLostError';
  readonly code = 'BOOT_LOCK_LOST';
  constructor(
    readonly owner: string,
    readonly state: SelfLock,
  ) {
    super(
      state === 'busy'
        ? `${owner}: the server gives this boot's lock to another session; no new grants until it is ours again`
        : `${owner}: the boot lock's connection is lost; no new grants until the lock is held again`,
    );
  }
}

/** A Reconciler follower's liveness watch looks this many times less often than the leader's. */
export const FOLLOWER_POLL_FACTOR = 4;

/** Another boot was seen dead: for the logs (not an error of this node). */
export class OwnerDownNotice extends Error {
  override readonly name = 'OwnerDownNotice';
  readonly code = 'OWNER_DOWN';
  constructor(
    readonly owner: string,
    readonly reason: DeathReason,
    /** It was gone before this boot came up (the first reading found it dead): old news. */
    readonly atStart = false,
  ) {
    super(`${owner} is gone (${reason}): its runs are adopted or re-queued now`);
  }
}

export interface ClusterWiringOptions {
  db: Db;
  owner: string;
  nodeId: string;
  clock: SupervisorClock;
  pollMs: number;
  staleAfterMs: number;
  bootLock: BootLockPort | undefined;
  /** Without a lock, watch the heartbeat rows anyway (RuntimeOptions.watchBeats). */
  watchBeats?: boolean;
  /** One Reconciler at a time: with a leader lock on the store handle, by leadership. */
  reconcileLock: boolean;
  /** The caller's own liveness, if it gave one: it wins. */
  liveness: OwnerLiveness | undefined;
  beats: HeartbeatOptions;
  reconcilerRef(): AnyActorRef | undefined;
  poke(): void;
  isDead(): boolean;
  /** Where lock losses and DOWNs are said (the node's log). */
  onNotice?(notice: BootLockLostError | OwnerDownNotice): void;
  onError(error: unknown): void;
  track<T>(work: Promise<T>): Promise<T>;
}

export async function startClusterLiveness(o: ClusterWiringOptions): Promise<{
  cluster: ClusterLiveness;
  liveness: OwnerLiveness;
  mayAdopt(session: Pick<Session, 'owner'>): Promise<boolean>;
  /** This node's leadership of the Reconciler; undefined: each pass takes the lock, or no lock. */
  leader: (LeaderPort & { release(): Promise<void>; drop(): void }) | undefined;
}> {
  const tick = () => {
    o.reconcilerRef()?.send({ type: 'roundtable.reconciler.tick' });
  };
  let leader: Awaited<ReturnType<typeof startReconcilerLeader>> | undefined;
  const cluster = new ClusterLiveness({
    db: o.db,
    owner: o.owner,
    nodeId: o.nodeId,
    clock: o.clock,
    pollMs: o.pollMs,
    // A follower runs no pass for a DOWN (the leader does), so it looks
    // less often: with 3 nodes the watch's reads were ~0.04 commits per job.
    // The pass a new leader runs at once reads afresh, and so does every
    // adopt check and depose decision.
    periodMs: () =>
      leader !== undefined && leader.state() !== 'leader'
        ? o.pollMs * FOLLOWER_POLL_FACTOR
        : o.pollMs,
    staleAfterMs: o.staleAfterMs,
    bootLock: o.bootLock,
    watchBeats: o.watchBeats === true,
    onDown(owner, reason, atStart) {
      if (o.isDead()) return;
      (o.onNotice ?? o.onError)(new OwnerDownNotice(owner, reason, atStart));
      tick();
    },
    onSelf(state) {
      if (o.isDead()) return;
      if (state === 'held') o.poke();
      else (o.onNotice ?? o.onError)(new BootLockLostError(o.owner, state));
    },
    onError: o.onError,
    track: o.track,
  });
  await cluster.start();
  const hold = o.bootLock?.holdLeaderLock;
  leader =
    o.reconcileLock && cluster.watching && hold !== undefined && hold !== null
      ? await startReconcilerLeader({
          hold,
          db: o.db,
          owner: o.owner,
          cluster,
          tick: () => {
            if (!o.isDead()) tick();
          },
          onError: o.onError,
          track: o.track,
        })
      : undefined;
  const liveness = o.liveness ?? (cluster.watching ? cluster : heartbeatLiveness(o.beats));
  return {
    cluster,
    liveness,
    leader,
    // Adopt only the dead: the owner on the row now, judged now.
    async mayAdopt(s) {
      if (s.owner === null || s.owner === o.owner) return true;
      return !(await liveness.isAlive(s.owner));
    },
  };
}
