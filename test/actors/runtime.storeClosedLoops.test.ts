/**
 * A store closed under a running node never answers again, unlike an
 * outage: the node's periodic loops that talk to the store (heartbeats,
 * Reconciler passes, the liveness watch, the tick feed's poll, the board's
 * watch flag and live output) stop at the first `StoreClosedError` instead
 * of failing every period until `stop()`. Counted at the store: a Kysely
 * plugin under the runtime's `db` sees every query it compiles.
 */
import type { KyselyPlugin } from 'kysely';
import { describe, expect, test } from 'vitest';
import { connect, type DbHandle } from '../../src/db/index.js';
import { migratedPglite } from '../../src/testing/migratedPglite.js';
import {
  closedStoreNode,
  fireFor,
  openedPerTest,
  SETTLE_DEADLINE_MS,
} from '../support/closedStoreNode.js';
import { describeServer, serverDatabase } from '../support/serverSuite.js';
import { within } from '../support/within.js';

const task = { title: 't', image: 'runner:v1', command: ['agent', '600'] };

const opened = openedPerTest();

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
  const queries = countingQueries();
  const node = await closedStoreNode(opened, handle, task, {
    db: handle.db.withPlugin(queries.plugin),
    nodeId: 'closed-store-loops',
    heartbeatMs: 1_000,
    reconcileMs: 3_000,
    // The heartbeat rows watched every livenessPollMs (no boot lock here).
    watchBeats: true,
  });
  // Watched: the flag is written, and other nodes' live output read every period.
  node.runtime.watch();
  await fireFor(node.clock, 2_000);
  return { ...node, asked: queries.asked };
}

async function closeThenWait(node: Awaited<ReturnType<typeof nodeOn>>, close: () => Promise<void>) {
  const { runtime, clock, errors, asked } = node;
  expect(asked.length).toBeGreaterThan(0);
  errors.length = 0;
  await close();
  // The first failures of each loop may land in the first periods after the close.
  await fireFor(clock, 30_000);
  asked.length = 0;
  // Then many periods of every loop: heartbeats (1 s), passes (3 s), the
  // liveness watch (250 ms), the feed's poll (1 s), live output (1 s).
  await fireFor(clock, 120_000);
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
