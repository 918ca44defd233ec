/**
 * A store closed under a running node never answers again, unlike an
 * outage: the node's periodic loops that talk to the store (heartbeats,
 * Reconciler passes, the liveness watch, the tick feed's poll, the board's
 * watch flag and live output) stop at the first `StoreClosedError` instead
 * of failing every period until `stop()`. Counted at the store: a Kysely
 * plugin under the runtime's `db` sees every query it compiles.
 */
import type { PGlite } from '@electric-sql/pglite';
import type { KyselyPlugin } from 'kysely';
import { afterEach, describe, expect, test } from 'vitest';
import { createRuntime } from '../../src/actors/runtime.js';
import type { Runtime } from '../../src/actors/runtimeTypes.js';
import { SimulatedBackend } from '../../src/containers/simulated/SimulatedBackend.js';
import { SimulatedCluster } from '../../src/containers/simulated/SimulatedCluster.js';
import { connect, type DbHandle, migrate } from '../../src/db/index.js';
import { TestClock } from '../../src/testing/index.js';
import { migratedPglite } from '../../src/testing/migratedPglite.js';
import { describeServer, serverDatabase } from '../support/serverSuite.js';
import { within } from '../support/within.js';

const task = { title: 't', image: 'runner:v1', command: ['agent', '600'] };

/** Real time a promise may take to settle before the test fails. */
const SETTLE_DEADLINE_MS = 5_000;

let opened: { runtime?: Runtime; handle?: DbHandle; pglite?: PGlite } = {};
afterEach(async () => {
  opened.runtime?.kill();
  await opened.handle?.close();
  if (opened.pglite?.closed === false) await opened.pglite.close();
  opened = {};
});

async function turns(n = 5) {
  for (let i = 0; i < n; i++) await new Promise<void>((r) => setImmediate(r));
}

/** Fires every timer due up to `ms` of virtual time from now. */
async function advance(clock: TestClock, ms: number) {
  const until = clock.now() + ms;
  for (let due = clock.nextDue(until); due !== null; due = clock.nextDue(until)) {
    clock.fireNext(due);
    await turns();
  }
}

/** The queries asked of the store, with where they came from (a failed assertion says). */
function countingQueries() {
  const asked: string[] = [];
  const plugin: KyselyPlugin = {
    transformQuery(args) {
      const from = (new Error().stack ?? '')
        .split('\n')
        .filter((l) => l.includes('/src/') && !l.includes('/node_modules/'))
        .slice(0, 3)
        .map((l) =>
          l
            .trim()
            .replace(/^at /, '')
            .replace(/\(.*\/src\//, '('),
        )
        .join(' < ');
      asked.push(`${args.node.kind} ${from}`);
      return args.node;
    },
    async transformResult(args) {
      return args.result;
    },
  };
  return { asked, plugin };
}

/** A node on `handle` with short periods, a job running, its board watched and the beats watched. */
async function nodeOn(handle: DbHandle) {
  await migrate(handle.db);
  const clock = new TestClock(Date.parse('2026-01-01T00:00:00Z'));
  const errors: unknown[] = [];
  const queries = countingQueries();
  const runtime = await createRuntime({
    db: handle.db.withPlugin(queries.plugin),
    backend: new SimulatedBackend(new SimulatedCluster({ clock })),
    clock,
    nodeId: 'closed-store-loops',
    heartbeatMs: 1_000,
    reconcileMs: 3_000,
    // The heartbeat rows watched every livenessPollMs (no boot lock here).
    watchBeats: true,
    onError: (error) => errors.push(error),
  });
  opened.runtime = runtime;
  await within(runtime.booted, 'booted', SETTLE_DEADLINE_MS);
  await within(runtime.submit('ann', task), 'submit', SETTLE_DEADLINE_MS);
  // Watched: the flag is written, and other nodes' live output read every period.
  runtime.watch();
  await advance(clock, 2_000);
  return { runtime, clock, errors, asked: queries.asked };
}

async function closeThenWait(node: Awaited<ReturnType<typeof nodeOn>>, close: () => Promise<void>) {
  const { runtime, clock, errors, asked } = node;
  expect(asked.length).toBeGreaterThan(0);
  errors.length = 0;
  await close();
  // The first failures of each loop may land in the first periods after the close.
  await advance(clock, 30_000);
  asked.length = 0;
  // Then many periods of every loop: heartbeats (1 s), passes (3 s), the
  // liveness watch (250 ms), the feed's poll (1 s), live output (1 s).
  await advance(clock, 120_000);
  expect(asked).toEqual([]);
  expect(errors.map((e) => (e as { code?: string }).code)).toEqual(['DB_STORE_CLOSED']);
  await within(runtime.stop(), 'stop()', SETTLE_DEADLINE_MS);
  expect(await within(runtime.exited, 'exited', SETTLE_DEADLINE_MS)).toEqual({ kind: 'stopped' });
  expect(errors.map((e) => (e as { code?: string }).code)).toEqual(['DB_STORE_CLOSED']);
}

describe('the loops of a node whose store was closed [pglite]', () => {
  test('stop at the first StoreClosedError: no store call in two minutes of periods, one onError, a clean stop', async () => {
    opened.pglite = await migratedPglite();
    const handle = await connect({ pglite: opened.pglite });
    opened.handle = handle;
    const node = await nodeOn(handle);
    await closeThenWait(node, () => handle.close());
  });
});

describeServer('the loops of a node whose store was closed [postgres server]', () => {
  const server = serverDatabase();
  test('stop at the first StoreClosedError: the same', async () => {
    const handle = await connect({ databaseUrl: server.url, poolMax: 2 });
    opened.handle = handle;
    const node = await nodeOn(handle);
    await closeThenWait(node, () => handle.close());
  });
});
