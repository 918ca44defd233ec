/**
 * The slot pool port the runtime drives: "asked for a runner" (queued, with a
 * position) and "holds a runner" (running) kept apart, caps applied, grants
 * sent to the waiting TaskRunner as `{ type: 'runner_slot', sessionId }`.
 *
 * The implementation is the fair RunnerPool (src/actors/runnerPoolSlotPool.ts)
 * under the root supervisor. The pool is a cache: `rebuild` and `reload`
 * make it match the rows, and the database decides every claim
 * (claimWithinCaps), so a stale pool can only delay a grant, never exceed a
 * cap. The TaskRunner and the Reconciler code against this port only.
 */

import type { Watchable } from '../supervisor/watchExit.js';
import type { RunnerSlotEvent } from './runnerPool.js';
import type { RuntimePoolSnapshot } from './runtimeTypes.js';

export type { RunnerSlotEvent };

/** Anything that can receive a grant and be monitored (a TaskRunner actor). */
export type SlotWaiter = Watchable & { send(event: RunnerSlotEvent): void };

/** A row the pool indexes; `since` (ms) orders arrivals, default: now. */
export interface PoolRow {
  sessionId: string;
  userId: string;
  since?: number;
}

/** What the runtime asks of a pool. */
export interface SlotPool {
  /**
   * Joins the line (or keeps its place when already in it). Returns 0 when
   * the session holds a slot, else its position; `null` while the pool is
   * restarting (the runtime re-attaches every live runner once it is back).
   */
  enqueue(userId: string, sessionId: string, waiter: SlotWaiter): number | null;
  /** Counts a session as holding a runner without a grant (an adopted run). */
  hold(userId: string, sessionId: string, waiter: SlotWaiter): void;
  /** Leaves the line or gives the runner back. Idempotent. */
  release(sessionId: string): void;
  /** Makes the index match rows the caller loaded (the Reconciler's step 4). */
  rebuild(rows: { queued: readonly PoolRow[]; running: readonly PoolRow[] }): void;
  /** Reloads the rows itself (a claim refused at a cap: another node took the room). */
  reload(): void;
  setUserCap(userId: string, maxRunning: number | null): void;
  /** 1-based position of a queued session in this pool's line, or null. */
  position(sessionId: string): number | null;
  /**
   * The pool's answer for any session: 0 when it holds a slot (or was just
   * granted one), its position when queued, null when the pool does not
   * know it (or is restarting).
   */
  placeOf(sessionId: string): number | null;
  snapshot(): RuntimePoolSnapshot;
  /** Sessions currently counted as holding a runner. */
  holders(): string[];
  /** Waits that ended (grant) since the last call, in seconds. */
  drainWaitSamples(): number[];
  /**
   * Called after every change of the index (a grant, an arrival, a release,
   * a cap change, a rebuild), from inside the pool's step: positions may
   * have moved. The listener must not call the pool back synchronously.
   */
  subscribe(listener: () => void): () => void;
  /** Forgets every waiter and monitor (the pool's owner is stopping). Idempotent. */
  close(): void;
}
