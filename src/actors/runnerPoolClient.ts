/**
 * The RunnerPool as callers use it: synchronous enqueue answering a position,
 * release, hold, caps that are written to `user_caps` before they apply, a
 * rebuild on request, and the board snapshot. A thin shell over the actor,
 * which the supervisor owns and may restart.
 */
import { type Actor, type AnyActorRef, createActor } from 'xstate';
import { checkCap } from '../machines/poolCaps.js';
import { type PoolSnapshot, poolSnapshot } from '../machines/poolSnapshot.js';
import {
  forgetWaiters,
  loadPoolRows,
  type PoolStore,
  type PoolWaiter,
  type RunnerPoolContext,
  type RunnerPoolInput,
  runnerPoolMachine,
} from './runnerPool.js';

/** The pool was called from inside its own step (a waiter enqueueing while being granted). */
export class PoolReentryError extends Error {
  override readonly name = 'PoolReentryError';
  readonly code = 'POOL_REENTRY';
  constructor(readonly sessionId: string) {
    super(`runnerPool: enqueue of ${sessionId} from inside a pool step; send it after the step`);
  }
}

/** The pool's logic with its one I/O actor provided: what a child spec starts. */
export function runnerPoolLogic(store: PoolStore) {
  return runnerPoolMachine.provide({ actors: { load: loadPoolRows(store) } });
}

type PoolActorRef = Actor<typeof runnerPoolMachine> | AnyActorRef;

export class RunnerPool {
  constructor(
    /** The running pool actor (for instance `supervisor.child('runnerPool')`). */
    private readonly actorOf: () => PoolActorRef,
    private readonly store: PoolStore,
    private readonly now: () => number,
  ) {}

  private context(): RunnerPoolContext {
    return (this.actorOf().getSnapshot() as { context: RunnerPoolContext }).context;
  }

  /**
   * Puts a session (its row already `queued`) in line and monitors its
   * waiter. Never refuses. Returns 0 when it holds a slot at once, else its
   * position (see docs/runner-pool.md).
   */
  enqueue(userId: string, sessionId: string, waiter: PoolWaiter): number {
    this.actorOf().send({ type: 'enqueue', userId, sessionId, waiter });
    const position = this.context().index.positionOf(sessionId);
    if (position === null) throw new PoolReentryError(sessionId);
    return position;
  }

  /** Counts an adopted run as holding a slot, and monitors its new owner. */
  hold(userId: string, sessionId: string, waiter: PoolWaiter): void {
    this.actorOf().send({ type: 'hold', userId, sessionId, waiter });
  }

  /** Leaves the line or gives the slot back (finished, cancelled). Idempotent. */
  release(sessionId: string): void {
    this.actorOf().send({ type: 'release', sessionId });
  }

  /** Writes the override to `user_caps`, then applies it. Lowering never stops a run. */
  async setUserCap(userId: string, max: number | null): Promise<void> {
    if (max !== null) checkCap(`overrides.${userId}`, max);
    await this.store.saveCap(userId, max, this.now());
    this.actorOf().send({ type: 'set_cap', userId, max });
  }

  /** Reloads rows and caps and makes the index match (the Reconciler's step 4). */
  rebuild(): void {
    this.actorOf().send({ type: 'rebuild' });
  }

  /** True once the rows are loaded (grants only start then). */
  get ready(): boolean {
    return (this.actorOf().getSnapshot() as { value: unknown }).value === 'ready';
  }

  /** 0: holds a slot; n: its position; null: unknown. */
  positionOf(sessionId: string): number | null {
    return this.context().index.positionOf(sessionId);
  }

  /** Takes back every monitor; call before stopping the actor. Idempotent. */
  close(): void {
    forgetWaiters(this.context());
  }

  snapshot(): PoolSnapshot {
    return poolSnapshot(this.context().index);
  }
}

/** Starts a pool outside a supervisor (tests, scripts). */
export function startRunnerPool(
  store: PoolStore,
  input: RunnerPoolInput,
): { pool: RunnerPool; actor: Actor<ReturnType<typeof runnerPoolLogic>> } {
  const actor = createActor(runnerPoolLogic(store), { input });
  actor.start();
  return { pool: new RunnerPool(() => actor, store, input.now), actor };
}
