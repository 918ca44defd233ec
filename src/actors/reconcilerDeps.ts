/**
 * What the Reconciler's steps are given (`ReconcilerDeps`), what a pass
 * reports (`PassReport`), and `recover`, the write every step makes when it
 * gives up on a run: shared by the pass (reconcilerSteps.ts) and its
 * adoption step (adoptOrphans.ts).
 */
import type { ContainerBackend } from '../containers/ContainerBackend.js';
import type { Db, Session } from '../db/index.js';
import type { TickFinish, TickOutcome } from '../db/tickTypes.js';
import type { OwnerLiveness } from './ownerLiveness.js';
import { requeueFinish } from './runnerFinish.js';

export interface ReconcilerDeps {
  db: Db;
  backend: ContainerBackend;
  /** Writes through the dispatcher's next tick (fail and re-queue counts against the caps). */
  submit(op: Omit<TickFinish, 'ref'>): Promise<TickOutcome>;
  /** Recomputes the dispatch counters from the rows under the tick's lock; what it fixed. */
  repair(): Promise<string[]>;
  /**
   * Vacuums the tables every tick rewrites (PGlite never autovacuums, and
   * dead row versions would slow every later tick); optional.
   */
  vacuum?(): Promise<void>;
  /**
   * Deletes one batch of finished work past its retention (src/db/pruneFinished.ts);
   * how many tasks went. Absent: everything is kept.
   */
  prune?(): Promise<number>;
  /** Asks the dispatcher for a tick: queued work may be grantable. */
  poke(): void;
  /** This boot's owner name. */
  owner: string;
  now: () => number;
  liveness: OwnerLiveness;
  /**
   * How long past its time limit a live owner's run is left to that owner
   * (src/actors/runTimeLimit.ts `overdueGraceMs`); absent: such runs are
   * left to their owners.
   */
  overdueGraceMs?: number;
  /** Image the boot sweep re-pins every run to; none: step 1 has nothing to do. */
  runnerImage?: string | undefined;
  /** Sessions with a live TaskRunner in this boot. */
  liveRunners(): ReadonlySet<string>;
  /**
   * Starts a TaskRunner for a run this pass fenced (`adoptMany`): it goes on
   * from `session`, the fenced row (no-op when the session has a runner),
   * with its task's time limit (null: none).
   */
  runAdopted(session: Session, timeLimitMs: number | null): Promise<void>;
  /** Stops a session's TaskRunner, if any (its row was moved on under it). */
  stopRunner(sessionId: string): void;
  onError(error: unknown): void;
  onGiveUp(reason: string): void;
  /** Aborted when the pass is abandoned: each step stops before its next row. */
  signal?: AbortSignal;
  /** Whether another pass was asked for since this one began (a long prune then stops early). */
  passWanted?(): boolean;
  /**
   * When each run was first seen `unobservable`, kept across passes (the
   * Reconciler owns one); absent (step tests): every pass counts from 0.
   */
  unobservedSince?: Map<string, number>;
}

/** What one pass did, step by step, for logs and tests. */
export interface PassReport {
  repinned: string[];
  adopted: string[];
  /** Of `adopted`, the runs taken from a live owner past their time limit (src/actors/runTimeLimit.ts `overdue`). */
  overdue: string[];
  failed: string[];
  removedHandles: string[];
  /** Dispatch counters step 4 found wrong and repaired (should stay empty). */
  repaired: string[];
  /** Finished tasks step 5 deleted, past their retention. */
  pruned: number;
}

export const emptyReport = (): PassReport => ({
  repinned: [],
  adopted: [],
  overdue: [],
  failed: [],
  removedHandles: [],
  repaired: [],
  pruned: 0,
});

/**
 * Fails and re-queues at the head of its user's line (the infrastructure
 * ended the run, not the user: it keeps its place), through the tick, so
 * the freed slot is counted and granted in the same commit. A row that
 * moved on meanwhile is simply not ours to fix. The board needs no read
 * here: the tick's reply carries both rows and the runtime shows them from
 * it (a read per orphan was 2,000 statements for a dead node's thousand
 * runs, queued on the pool ahead of the very ticks that re-grant them).
 */
export async function recover(deps: ReconcilerDeps, s: Session, reason: string): Promise<boolean> {
  const outcome = await deps.submit(requeueFinish(s, reason));
  if (outcome.kind !== 'applied') return false;
  deps.onGiveUp(reason);
  return true;
}
