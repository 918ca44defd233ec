/**
 * The Reconciler's steps and the pass that runs them in the order DESIGN.md
 * fixes. Each step re-reads the rows it needs: the previous step may have
 * changed them, and that is the point. Step 2, the adoption of orphans, is
 * adoptOrphans.ts; what every step is given and reports, reconcilerDeps.ts.
 */
import { listRunning, PRUNE_BATCH } from '../db/index.js';
import { adoptOrphans } from './adoptOrphans.js';
import { emptyReport, type PassReport, type ReconcilerDeps, recover } from './reconcilerDeps.js';

// The pass's signature: its callers know the pass's module, not where the types live.
export type { PassReport, ReconcilerDeps } from './reconcilerDeps.js';

/**
 * Step 1: re-pin every run to the runner image and recover the sessions
 * whose containers that replaced. Their marker and output lived in the old
 * container's /tmp, so an adoption could only poll for nothing: fail them
 * as `container_replaced` and queue them again, now.
 */
export async function recoverRepinned(
  deps: ReconcilerDeps,
  report = emptyReport(),
): Promise<PassReport> {
  if (deps.runnerImage === undefined) return report;
  const repinned = await deps.backend.repin(deps.runnerImage);
  if (repinned.length === 0) return report;
  const ids = new Set(repinned.map((r) => r.sessionId));
  for (const s of await listRunning(deps.db)) {
    deps.signal?.throwIfAborted();
    if (!ids.has(s.id)) continue;
    deps.stopRunner(s.id);
    if (await recover(deps, s, 'container_replaced')) report.repinned.push(s.id);
  }
  return report;
}

/**
 * Step 3: remove services that no running session owns (finished runs whose
 * removal failed, runs of sessions failed by steps 1 and 2, a start that
 * crashed before recording its handle).
 */
export async function sweepStaleHandles(
  deps: ReconcilerDeps,
  report = emptyReport(),
): Promise<PassReport> {
  const running = new Map((await listRunning(deps.db)).map((s) => [s.id, s]));
  for (const ref of await deps.backend.listHandles()) {
    deps.signal?.throwIfAborted();
    const s = running.get(ref.sessionId);
    // A running session with no handle yet may be mid-start: its service is kept.
    if (s !== undefined && (s.handle === null || s.handle === ref.handle)) continue;
    try {
      await deps.backend.remove(ref);
      report.removedHandles.push(ref.handle);
    } catch (error) {
      deps.onError(error);
    }
  }
  return report;
}

/**
 * Step 4: the dispatch counters (`user_lines`, `dispatch_state`) recomputed
 * from the rows under the tick's lock, repairing any drift, then a tick:
 * queued work after a deploy is granted by the database in its order, by
 * whichever node has room, not restarted here.
 */
export async function repairDispatch(
  deps: ReconcilerDeps,
  report = emptyReport(),
): Promise<PassReport> {
  report.repaired.push(...(await deps.repair()));
  await deps.vacuum?.();
  deps.poke();
  return report;
}

/**
 * How long one pass goes on pruning while batches come back full, on the
 * injected clock. A time, not a count of batches: a fixed 100 batches (of
 * 100) a pass kept up with ~160 finished tasks a second at the default
 * `reconcileMs`, however fast the store deletes; a batch takes ~10 ms
 * (bench/results/history.md: ~8,000-10,000 tasks a second), so 5 s a pass
 * keeps up with ~650-800 a second, and a faster store with more.
 */
export const PRUNE_PASS_MS = 5_000;

/**
 * Step 5: finished work past its retention goes, a batch at a time, each
 * batch a short hold of the tick's lock of its own, so ticks wait for one
 * batch at most. It goes on while batches come back full, until
 * PRUNE_PASS_MS have gone by, and stops before the next batch when a pass
 * was asked for meanwhile (`deps.passWanted`: an owner's DOWN, whose
 * adoptions must not wait behind a long backlog; that pass prunes on).
 * The first pass after an upgrade over a long history works part of it
 * off and leaves the rest to the passes after.
 * `batch`: the size the prune was asked for; fewer means none is left.
 */
export async function pruneExpired(
  deps: ReconcilerDeps,
  report = emptyReport(),
  batch = PRUNE_BATCH,
): Promise<PassReport> {
  if (deps.prune === undefined) return report;
  const until = deps.now() + PRUNE_PASS_MS;
  for (;;) {
    deps.signal?.throwIfAborted();
    let n: number;
    try {
      n = await deps.prune();
    } catch (error) {
      // Reported, not the pass's failure: the pass's real work is done, and
      // its boot pass is what `booted` waits for. The next pass tries again.
      deps.onError(error);
      break;
    }
    report.pruned += n;
    if (n < batch || deps.now() >= until || deps.passWanted?.() === true) break;
  }
  return report;
}

/**
 * One pass. THE ORDER IS A CONTRACT, not a detail:
 * 1 before 2, because the re-pin replaces containers, and a session whose
 *   container it replaced can never show its marker: adopting it would only
 *   poll until a give-up that step 1 can declare at once;
 * 2 before 3, so a run being adopted still has its service when the sweep
 *   looks (the sweep spares what running rows own), and the runs step 2
 *   failed lose theirs in the same pass;
 * 4 after them, so the counters are recomputed from the rows as steps 1-3 left them;
 * 5 last, and never in the boot pass: it touches only work that ended a
 *   retention period ago, which no earlier step reads, and a long prune
 *   must delay neither an adoption nor `booted`, which waits for the boot pass.
 */
export async function reconcilePass(
  deps: ReconcilerDeps,
  options: { boot: boolean; signal?: AbortSignal; wanted?: () => boolean },
): Promise<PassReport> {
  const report = emptyReport();
  // An abandoned pass (past its deadline) stops at the next step or row;
  // one asked for meanwhile cuts a long prune short.
  const d = {
    ...deps,
    ...(options.signal === undefined ? {} : { signal: options.signal }),
    ...(options.wanted === undefined ? {} : { passWanted: options.wanted }),
  };
  if (options.boot) await recoverRepinned(d, report);
  options.signal?.throwIfAborted();
  await adoptOrphans(d, report);
  options.signal?.throwIfAborted();
  await sweepStaleHandles(d, report);
  options.signal?.throwIfAborted();
  await repairDispatch(d, report);
  if (!options.boot) {
    options.signal?.throwIfAborted();
    await pruneExpired(d, report);
  }
  return report;
}
