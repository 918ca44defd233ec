/**
 * Step 5 of the Reconciler's pass, the prune, against a counting fake on a
 * fake clock: it asks for batches until one comes back short, stops at its
 * per-pass time (PRUNE_PASS_MS) and when another pass is wanted, reports a
 * failure without failing the pass, and stops when the pass is abandoned. The prune itself is test/db/pruneFinished.test.ts;
 * the whole pass with real rows, test/actors/runtime.retention.test.ts.
 */
import { expect, test } from 'vitest';
import { emptyReport } from '../../src/actors/reconcilerDeps.js';
import type { PassReport, ReconcilerDeps } from '../../src/actors/reconcilerSteps.js';
import { PRUNE_PASS_MS, pruneExpired } from '../../src/actors/reconcilerSteps.js';

/**
 * Deps with only what step 5 reads: a prune handing out `left` tasks,
 * `batch` at a time, each batch taking `batchMs` on the fake clock.
 */
function pruning(left: number, batch: number, fail?: Error, batchMs = 10) {
  const calls = { prune: 0, errors: [] as unknown[] };
  let now = 1_000_000;
  const deps = {
    now: () => now,
    prune: async () => {
      calls.prune += 1;
      now += batchMs;
      if (fail !== undefined) throw fail;
      const n = Math.min(batch, left);
      left -= n;
      return n;
    },
    onError: (e: unknown) => calls.errors.push(e),
  } as Partial<ReconcilerDeps> as ReconcilerDeps;
  return { deps, calls };
}

test('asks for batches until one comes back short', async () => {
  const { deps, calls } = pruning(250, 100);
  const report: PassReport = await pruneExpired(deps, emptyReport(), 100);
  expect(report.pruned).toBe(250);
  expect(calls.prune).toBe(3);
  // Exactly a batch left: one more call finds none.
  const even = pruning(200, 100);
  expect((await pruneExpired(even.deps, emptyReport(), 100)).pruned).toBe(200);
  expect(even.calls.prune).toBe(3);
});

test('goes on while batches come back full, for PRUNE_PASS_MS on the clock; the next pass goes on', async () => {
  // 10 ms a batch: the pass asks for batches until PRUNE_PASS_MS have gone by.
  const perPass = PRUNE_PASS_MS / 10;
  const { deps, calls } = pruning(100 * 3 * perPass, 100);
  expect((await pruneExpired(deps, emptyReport(), 100)).pruned).toBe(100 * perPass);
  expect(calls.prune).toBe(perPass);
  expect((await pruneExpired(deps, emptyReport(), 100)).pruned).toBe(100 * perPass);
  // Slower batches: fewer of them in the same time.
  const slow = pruning(1_000_000, 100, undefined, PRUNE_PASS_MS / 4);
  expect((await pruneExpired(slow.deps, emptyReport(), 100)).pruned).toBe(400);
});

test('stops after the batch under way once another pass is wanted (that pass prunes on)', async () => {
  const { deps, calls } = pruning(1_000_000, 100);
  const wanted = { ...deps, passWanted: () => calls.prune >= 3 };
  expect((await pruneExpired(wanted, emptyReport(), 100)).pruned).toBe(300);
  expect(calls.prune).toBe(3);
  // Wanted from the start: one batch still goes, so a busy loop never starves the prune.
  const busy = pruning(1_000_000, 100);
  expect(
    (await pruneExpired({ ...busy.deps, passWanted: () => true }, emptyReport(), 100)).pruned,
  ).toBe(100);
});

test('a failed batch is reported, not the pass failing', async () => {
  const boom = new Error('connection lost');
  const { deps, calls } = pruning(1_000, 100, boom);
  const report = await pruneExpired(deps, emptyReport(), 100);
  expect(report.pruned).toBe(0);
  expect(calls.errors).toEqual([boom]);
  expect(calls.prune).toBe(1);
});

test('an abandoned pass asks for no more batches', async () => {
  const { deps, calls } = pruning(1_000, 100);
  const abort = new AbortController();
  abort.abort(new Error('past its deadline'));
  await expect(pruneExpired({ ...deps, signal: abort.signal }, emptyReport(), 100)).rejects.toThrow(
    'past its deadline',
  );
  expect(calls.prune).toBe(0);
});

test('without a prune (retention off) it does nothing', async () => {
  const report = await pruneExpired({
    onError: () => {},
  } as Partial<ReconcilerDeps> as ReconcilerDeps);
  expect(report).toEqual(emptyReport());
});
