/**
 * Every promise of the public API settles when the runtime stops (issue 14,
 * item 8 and "What done looks like"): a `reconcile()` whose pass hangs on the
 * engine, the `booted` of a runtime stopped before its boot pass ran, and a
 * command whose write was still waiting for a tick. Virtual clock; nothing
 * here waits on real time but the deadline that turns a hang into a failure.
 */
import type { PGlite } from '@electric-sql/pglite';
import { afterAll, afterEach, beforeAll, expect, test } from 'vitest';
import { createRuntime } from '../../src/actors/runtime.js';
import { type Runtime, RuntimeStoppedError } from '../../src/actors/runtimeTypes.js';
import { SimulatedBackend } from '../../src/containers/simulated/SimulatedBackend.js';
import { SimulatedCluster } from '../../src/containers/simulated/SimulatedCluster.js';
import { connect, type DbHandle, migrate } from '../../src/db/index.js';
import { ReconcilerStoppedError } from '../../src/machines/reconcileLoop.js';
import { createTestRuntime, TestClock, type TestRuntime } from '../../src/testing/index.js';
import { migratedPglite } from '../../src/testing/migratedPglite.js';
import { switchableStore } from '../support/switchableStore.js';
import { settledWithin } from '../support/within.js';

/** Real time a promise may take to settle before it counts as hanging. */
const SETTLE_DEADLINE_MS = 5_000;

/** What `p` settled with, or a failure if it did not settle in time. */
const settled = (p: Promise<unknown>, what: string) => settledWithin(p, what, SETTLE_DEADLINE_MS);

let pglite: PGlite;
let h: TestRuntime | undefined;
let extra: { runtime?: Runtime; handle?: DbHandle } = {};
beforeAll(async () => {
  pglite = await migratedPglite();
}, 30_000);
afterEach(async () => {
  await h?.close();
  h = undefined;
  extra.runtime?.kill();
  await extra.handle?.close();
  extra = {};
});
afterAll(async () => {
  await pglite.close();
});

/** A few turns of the event loop (virtual time does not move). */
async function turns(n = 50) {
  for (let i = 0; i < n; i++) await new Promise<void>((r) => setImmediate(r));
}

const task = { title: 't', image: 'runner:v1', command: ['agent', '30'] };

test('reconcile() during a pass that hangs on the engine rejects when the runtime stops', async () => {
  h = await createTestRuntime({ pglite });
  await h.runtime.booted;
  // Every engine call of the pass (the stale-handle sweep lists services) stalls.
  h.cluster.hangApi(60 * 60_000);
  const pass = h.runtime.reconcile();
  let early = false;
  void pass.then(
    () => {
      early = true;
    },
    () => {
      early = true;
    },
  );
  await turns();
  expect(early).toBe(false);
  const stop = settled(h.runtime.stop(), 'stop()');
  const outcome = await settled(pass, 'reconcile()');
  expect(outcome.ok).toBe(false);
  const error = outcome.ok ? undefined : outcome.error;
  expect(
    error instanceof RuntimeStoppedError || error instanceof ReconcilerStoppedError,
    String(error),
  ).toBe(true);
  expect((await stop).ok).toBe(true);
  expect(await settled(h.runtime.exited, 'exited')).toEqual({
    ok: true,
    value: { kind: 'stopped' },
  });
  // The pass's engine call still stalls in virtual time: end it, so that
  // close() finds nothing in flight instead of waiting out its deadline.
  const end = h.clock.now() + 60 * 60_000;
  while (h.clock.fireNext(end)) await turns(1);
  await turns();
  expect(h.runtime.busy()).toBe(0);
});

test('booted of a runtime stopped before its boot pass rejects with RuntimeStoppedError', async () => {
  const clock = new TestClock();
  const cluster = new SimulatedCluster({ clock });
  // The boot pass's first engine call never answers (in virtual time).
  cluster.hangApi(60 * 60_000);
  const handle = await connect({ pglite });
  extra.handle = handle;
  await migrate(handle.db);
  const runtime = await createRuntime({
    db: handle.db,
    backend: new SimulatedBackend(cluster),
    clock,
    caps: { maxRunning: 2, defaultUserCap: 1 },
    nodeId: 'never-booted',
    onError: () => undefined,
  });
  extra.runtime = runtime;
  await turns();
  const stop = settled(runtime.stop(), 'stop()');
  const outcome = await settled(runtime.booted, 'booted');
  expect(outcome.ok).toBe(false);
  const error = outcome.ok ? undefined : outcome.error;
  expect(error).toBeInstanceOf(RuntimeStoppedError);
  expect(error).toMatchObject({ code: 'RUNTIME_STOPPED', exit: { kind: 'stopped' } });
  expect((await stop).ok).toBe(true);
});

test('commands whose writes have not been sent when stop() runs reject with RuntimeStoppedError', async () => {
  const handle = await connect({ pglite });
  extra.handle = handle;
  const store = switchableStore(handle.db);
  h = await createTestRuntime({ db: store.db });
  await h.runtime.booted;
  store.down();
  // The first write's tick fails (transient): it waits for the retry, on the
  // virtual clock, which does not move. The second one waits behind it.
  const first = h.runtime.submit('alice', task);
  await turns();
  expect(store.refused).toBeGreaterThanOrEqual(1);
  const second = h.runtime.submit('bob', task);
  await turns();
  expect(h.runtime.health().backlog).toBe(2);

  const stop = settled(h.runtime.stop(), 'stop()');
  for (const [name, p] of [
    ['first', first],
    ['second', second],
  ] as const) {
    const outcome = await settled(p, `submit (${name})`);
    expect(outcome.ok, name).toBe(false);
    const error = outcome.ok ? undefined : outcome.error;
    expect(error, name).toBeInstanceOf(RuntimeStoppedError);
  }
  expect((await stop).ok).toBe(true);
  // Nothing was written: the store was down the whole time.
  store.up();
  const rows = await handle.db.selectFrom('tasks').select('id').execute();
  expect(rows).toEqual([]);
});
