import { expect, test } from 'vitest';
import type { PassReport } from '../../src/actors/reconcilerSteps.js';
import { BootSignal } from '../../src/actors/runtimeBooted.js';
import { RuntimeStoppedError } from '../../src/actors/runtimeExit.js';

const report = (n: number): PassReport => ({
  repinned: [],
  adopted: Array.from({ length: n }, (_, i) => `ses_${i}`),
  overdue: [],
  failed: [],
  removedHandles: [],
  repaired: [],
  pruned: 0,
});

function deferred() {
  let resolve: () => void = () => {};
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

test('the first pass wins, and only once the board has loaded', async () => {
  const ready = deferred();
  const signal = new BootSignal(ready.promise);
  let seen: PassReport | undefined;
  void signal.promise.then((r) => {
    seen = r;
  });
  signal.passed(report(1));
  signal.passed(report(2));
  await new Promise((r) => setTimeout(r, 0));
  expect(seen).toBeUndefined();
  // The tree ending after the pass no longer rejects it.
  signal.ended({ kind: 'stopped' });
  ready.resolve();
  await expect(signal.promise).resolves.toEqual(report(1));
});

test('the tree ending first rejects with the exit; a later pass changes nothing', async () => {
  const signal = new BootSignal(Promise.resolve());
  signal.ended({ kind: 'killed' });
  signal.passed(report(1));
  const error = await signal.promise.catch((e: unknown) => e);
  expect(error).toBeInstanceOf(RuntimeStoppedError);
  expect((error as RuntimeStoppedError).exit).toEqual({ kind: 'killed' });
});

test('nobody waiting when the tree ends is no unhandled rejection', async () => {
  const signal = new BootSignal(Promise.resolve());
  signal.ended({ kind: 'stopped' });
  await new Promise((r) => setTimeout(r, 0));
  expect(signal.promise).toBeInstanceOf(Promise);
});
