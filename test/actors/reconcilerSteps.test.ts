/**
 * Step 5 of the Reconciler's pass, the prune, against a counting fake: it
 * asks for batches until one comes back short, stops at its per-pass
 * budget, reports a failure without failing the pass, and stops when the
 * pass is abandoned. The prune itself is test/db/pruneFinished.test.ts;
 * the whole pass with real rows, test/actors/runtime.retention.test.ts.
 */
import { expect, test } from 'vitest';
import { emptyReport } from '../../src/actors/reconcilerDeps.js';
import type { PassReport, ReconcilerDeps } from '../../src/actors/reconcilerSteps.js';
import { PRUNE_BATCHES_PER_PASS, pruneExpired } from '../../src/actors/reconcilerSteps.js';

/** Deps with only what step 5 reads: a prune handing out `left` tasks, `batch` at a time. */
function pruning(left: number, batch: number, fail?: Error) {
  const calls = { prune: 0, errors: [] as unknown[] };
  const deps = {
    prune: async () => {
      calls.prune += 1;
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

test('stops at its budget per pass, and the next pass goes on', async () => {
  const { deps, calls } = pruning(10 * PRUNE_BATCHES_PER_PASS, 5);
  expect((await pruneExpired(deps, emptyReport(), 5)).pruned).toBe(5 * PRUNE_BATCHES_PER_PASS);
  expect(calls.prune).toBe(PRUNE_BATCHES_PER_PASS);
  expect((await pruneExpired(deps, emptyReport(), 5)).pruned).toBe(5 * PRUNE_BATCHES_PER_PASS);
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
