/**
 * The Reconciler actor: the pure `reconcileLoopMachine` running
 * `reconcilePass` at boot, every `reconcileMs` and on every `tick` event.
 * With `lock`, a pass runs only while holding the Postgres advisory lock, so
 * of several nodes sharing one database only one reconciles at a time: a
 * periodic pass that does not get the lock is skipped (the holder is doing
 * the same work), a boot pass is retried (ReconcilerLockBusyError).
 *
 * Every pass has a deadline (`passTimeoutMs` on the injected clock) on top
 * of the backends' per-call deadlines: past it the pass is abandoned (its
 * signal aborts it at its next step) and the lock is given back, so a hung
 * pass can never hold the lock for ever.
 */
import { sql } from 'kysely';
import { type AnyActorRef, fromPromise } from 'xstate';
import { ADVISORY_LOCKS, type Db, LeadershipLostError, LOCK_NAMESPACE } from '../db/index.js';
import {
  type ReconcileLoopEmitted,
  type ReconcileLoopEvent,
  ReconcilerStoppedError,
  reconcileLoopMachine,
} from '../machines/reconcileLoop.js';
import type { SupervisorClock } from '../supervisor/clock.js';
import { describeExitReason } from '../supervisor/exitReason.js';
import { watchExit } from '../supervisor/watchExit.js';
import { afterStoreFailure } from './afterStoreFailure.js';
import type { LeaderPort } from './reconcilerLeader.js';
import { type PassReport, type ReconcilerDeps, reconcilePass } from './reconcilerSteps.js';

export interface ReconcilerOptions extends ReconcilerDeps {
  lock: boolean;
  /**
   * With `lock`, the leader lock (src/actors/reconcilerLeader.ts): a pass
   * runs only while this node leads, under the leadership's signal. Without
   * it, each pass takes the lock on a pooled connection (withReconcilerLock).
   */
  leader?: LeaderPort | undefined;
  /** A boot pass found another node leading: its leader covers this boot. */
  onFollow?(): void;
  /** Runs the pass deadline. */
  clock: SupervisorClock;
  /** Deadline of one pass. */
  passTimeoutMs: number;
  track<T>(work: Promise<T>): Promise<T>;
  /** After every pass that ran (`null`: a periodic pass skipped, another node held the lock). */
  onPass?(report: PassReport | null, pass: { boot: boolean }): void;
}

/** Giving the lock back failed (the pass's own outcome is kept beside it). */
export class ReconcilerUnlockError extends Error {
  override readonly name = 'ReconcilerUnlockError';
  readonly code = 'RECONCILER_UNLOCK_FAILED';
}

/** A pass ran past its deadline and was abandoned. */
export class ReconcilerPassTimeoutError extends Error {
  override readonly name = 'ReconcilerPassTimeoutError';
  readonly code = 'RECONCILER_PASS_TIMEOUT';
}

/**
 * Runs `fn` holding the reconciler's session-level advisory lock on one
 * pooled connection, or returns null when another node holds it. The lock
 * is session-level (not xact) because a pass spans container calls that must
 * not run inside one long transaction. Needs a pool of two or more.
 *
 * If the unlock fails, its error never hides the pass's: a failed pass and
 * a failed unlock reject with an AggregateError of both; a pass that worked
 * rejects with the ReconcilerUnlockError (its `cause` the driver's error).
 * An unlock fails when the connection broke, and Postgres frees a session's
 * locks when the session ends, so no lock outlives that.
 */
export async function withReconcilerLock<T>(db: Db, fn: () => Promise<T>): Promise<T | null> {
  return db.connection().execute(async (conn) => {
    const got = await sql<{
      ok: boolean;
    }>`SELECT pg_try_advisory_lock(${LOCK_NAMESPACE}, ${ADVISORY_LOCKS.reconciler}) AS ok`.execute(
      conn,
    );
    if (got.rows[0]?.ok !== true) return null;
    let outcome: { ok: true; value: T } | { ok: false; error: unknown };
    try {
      outcome = { ok: true, value: await fn() };
    } catch (error) {
      outcome = { ok: false, error };
    }
    try {
      await sql`SELECT pg_advisory_unlock(${LOCK_NAMESPACE}, ${ADVISORY_LOCKS.reconciler})`.execute(
        conn,
      );
    } catch (cause) {
      const unlock = new ReconcilerUnlockError('could not give back the reconciler lock', {
        cause,
      });
      if (outcome.ok) throw unlock;
      throw new AggregateError(
        [outcome.error, unlock],
        'the reconcile pass failed, and giving back its lock failed too',
      );
    }
    if (!outcome.ok) throw outcome.error;
    return outcome.value;
  });
}

/**
 * Runs `work` with a deadline on `clock`: past `ms` the returned promise
 * rejects with ReconcilerPassTimeoutError and `work`'s signal aborts (the
 * pass checks it between steps and stops), whether or not `work` ever
 * settles. Its late outcome is dropped.
 */
export function withPassDeadline<T>(
  work: (signal: AbortSignal) => Promise<T>,
  options: { clock: SupervisorClock; ms: number },
): Promise<T> {
  const abort = new AbortController();
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const timer = options.clock.setTimeout(() => {
      if (settled) return;
      settled = true;
      const error = new ReconcilerPassTimeoutError(
        `the reconcile pass took longer than ${options.ms} ms and was abandoned`,
      );
      abort.abort(error);
      reject(error);
    }, options.ms);
    work(abort.signal).then(
      (value) => {
        if (settled) return;
        settled = true;
        options.clock.clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        if (settled) return;
        settled = true;
        options.clock.clearTimeout(timer);
        reject(error);
      },
    );
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
  // One count for the Reconciler's life: the unobservable grace spans passes.
  const deps = {
    ...options,
    unobservedSince: options.unobservedSince ?? new Map<string, number>(),
  };
  // A tick came during the running pass (the loop's `wanted` action): one
  // more pass follows it at once, so this one may cut its prune short.
  let wanted = false;
  return reconcileLoopMachine.provide({
    actors: {
      pass: fromPromise(async ({ input }) => {
        wanted = false;
        const run = (lead?: AbortSignal) =>
          withPassDeadline(
            (deadline) =>
              reconcilePass(deps, {
                ...input,
                signal: lead === undefined ? deadline : AbortSignal.any([deadline, lead]),
                wanted: () => wanted,
              }),
            { clock: options.clock, ms: options.passTimeoutMs },
          );
        const lead = options.lock ? options.leader?.leadership() : undefined;
        const report = await options.track(
          !options.lock
            ? run()
            : options.leader === undefined
              ? withReconcilerLock(options.db, () => run())
              : lead === null || lead === undefined
                ? Promise.resolve(null)
                : run(lead),
        );
        if (report === null && input.boot && options.leader !== undefined) options.onFollow?.();
        // Skipping is fine for a periodic pass (the holder does the same
        // work), not for a boot pass: step 1 (the re-pin to this boot's
        // runner image) runs only in a boot pass, and the holder may be in a
        // periodic one. Failing keeps the loop's boot flag set.
        if (report === null && input.boot)
          throw new ReconcilerLockBusyError(
            'another node holds the reconciler lock; the boot pass will run again',
          );
        options.onPass?.(report, { boot: input.boot });
      }),
    },
    // A closed store never answers again: no pass after the one that found it closed.
    guards: { halts: (_, params) => afterStoreFailure(params.error) === 'halt' },
    actions: {
      wanted: () => {
        wanted = true;
      },
      report: (_, params) => {
        // Neither is a fault of the pass: another node leads (the lock says so itself).
        if (
          !(
            params.error instanceof ReconcilerLockBusyError ||
            params.error instanceof LeadershipLostError
          )
        )
          options.onError(params.error);
      },
    },
  });
}

export { ReconcilerStoppedError };

/**
 * Asks the Reconciler actor `ref` for a pass and settles once the pass that
 * covers it has finished: resolves, or rejects with the pass's error. The
 * answer is the loop's `roundtable.reconciler.passed` naming this call's
 * tick id. Like gen_server's call it watches the actor while it waits,
 * because a stopped or crashed actor answers nobody: it rejects with
 * ReconcilerStoppedError (`code` RECONCILER_STOPPED) when the actor stops,
 * errors or is already gone (a tick sent to a stopped actor is dropped by
 * XState). No deadline of its own: at most two passes (the running one,
 * then the covering one) are waited for, and each has `passTimeoutMs`.
 */
export function requestPass(ref: AnyActorRef): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const id = `pass-${++passRequests}`;
    let settled = false;
    let unwatch: (() => void) | undefined;
    let answered: { unsubscribe(): void } | undefined;
    const settle = (error?: unknown) => {
      if (settled) return;
      settled = true;
      unwatch?.();
      answered?.unsubscribe();
      if (error === undefined) resolve();
      else reject(error);
    };
    unwatch = watchExit(ref, (reason) =>
      settle(
        new ReconcilerStoppedError(
          `the reconciler exited (${describeExitReason(reason)}) before the pass covering this tick finished`,
          { cause: typeof reason === 'object' && 'error' in reason ? reason.error : undefined },
        ),
      ),
    );
    if (!unwatch) {
      settle(new ReconcilerStoppedError('the reconciler is not running'));
      return;
    }
    answered = ref.on('roundtable.reconciler.passed', (passed: ReconcileLoopEmitted) => {
      if (passed.ticks.includes(id)) settle(passed.error);
    });
    const tick: ReconcileLoopEvent = { type: 'roundtable.reconciler.tick', id };
    ref.send(tick);
  });
}

/** Tick ids of this process's `requestPass` calls: unique per Reconciler, which is all they need. */
let passRequests = 0;
