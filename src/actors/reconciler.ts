/**
 * The Reconciler actor: the pure `reconcileLoopMachine` running
 * `reconcilePass` at boot, every `reconcileMs` and on every `tick` event.
 * With `lock`, a pass runs only while holding the Postgres advisory lock, so
 * of several nodes sharing one database only one reconciles at a time; a
 * node that does not get the lock skips the pass (the holder is doing it).
 */
import { sql } from 'kysely';
import { fromPromise } from 'xstate';
import { ADVISORY_LOCKS, type Db, LOCK_NAMESPACE } from '../db/index.js';
import { reconcileLoopMachine } from '../machines/reconcileLoop.js';
import { type PassReport, type ReconcilerDeps, reconcilePass } from './reconcilerSteps.js';

export interface ReconcilerOptions extends ReconcilerDeps {
  lock: boolean;
  track<T>(work: Promise<T>): Promise<T>;
  onPass?(report: PassReport | null): void;
}

/**
 * Runs `fn` holding the reconciler's session-level advisory lock on one
 * pooled connection, or returns null when another node holds it. The lock
 * is session-level (not xact) because a pass spans container calls that must
 * not run inside one long transaction. Needs a pool of two or more.
 */
export async function withReconcilerLock<T>(db: Db, fn: () => Promise<T>): Promise<T | null> {
  return db.connection().execute(async (conn) => {
    const got = await sql<{
      ok: boolean;
    }>`SELECT pg_try_advisory_lock(${LOCK_NAMESPACE}, ${ADVISORY_LOCKS.reconciler}) AS ok`.execute(
      conn,
    );
    if (got.rows[0]?.ok !== true) return null;
    try {
      return await fn();
    } finally {
      await sql`SELECT pg_advisory_unlock(${LOCK_NAMESPACE}, ${ADVISORY_LOCKS.reconciler})`.execute(
        conn,
      );
    }
  });
}

/**
 * A boot pass found another node holding the lock. Not a fault: the loop
 * keeps the pass a boot pass and tries again at the next period or tick,
 * and the error is not reported. A `reconcile()` caller whose tick it was
 * gets it, since that pass did nothing.
 */
export class ReconcilerLockBusyError extends Error {
  override readonly name = 'ReconcilerLockBusyError';
  readonly code = 'RECONCILER_LOCK_BUSY';
}

/** The Reconciler logic; start it with input `{ periodMs }`. */
export function reconcilerLogic(options: ReconcilerOptions) {
  return reconcileLoopMachine.provide({
    actors: {
      pass: fromPromise(async ({ input }) => {
        const run = () => reconcilePass(options, input);
        const report = await options.track(
          options.lock ? withReconcilerLock(options.db, run) : run(),
        );
        // Skipping is fine for a periodic pass (the holder does the same
        // work), not for a boot pass: step 1 (the re-pin to this boot's
        // runner image) runs only in a boot pass, and the holder may be in a
        // periodic one. Failing keeps the loop's boot flag set.
        if (report === null && input.boot)
          throw new ReconcilerLockBusyError(
            'another node holds the reconciler lock; the boot pass will run again',
          );
        options.onPass?.(report);
      }),
    },
    actions: {
      report: (_, params) => {
        if (!(params.error instanceof ReconcilerLockBusyError)) options.onError(params.error);
      },
    },
  });
}
