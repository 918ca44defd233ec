/**
 * An application that closes the store before `runtime.stop()` (an easy
 * ordering mistake in a shutdown hook): every tick, beat and pass of the
 * still running node fails from then on. Its `onError` hears one typed
 * `StoreClosedError` (`DB_STORE_CLOSED`), not an untyped driver error on
 * every retry; a command is answered `unavailable`; `stop()` then ends the
 * node cleanly. On PGlite (the handle closed, or the PGlite closed under
 * it) and on the Postgres server. Virtual clock: minutes of retries take
 * no real time.
 */
import { describe, expect, test } from 'vitest';
import { RuntimeCommandError } from '../../src/actors/runtimeTypes.js';
import { connect, type DbHandle, StoreClosedError } from '../../src/db/index.js';
import { migratedPglite } from '../../src/testing/migratedPglite.js';
import {
  closedStoreNode,
  fireFor,
  openedPerTest,
  SETTLE_DEADLINE_MS,
} from '../support/closedStoreNode.js';
import { describeServer, serverDatabase } from '../support/serverSuite.js';
import { within } from '../support/within.js';

const task = { title: 't', image: 'runner:v1', command: ['agent', '30'] };

const opened = openedPerTest();

/** A node on `handle` with a job running, and what its onError was told. */
const nodeOn = (handle: DbHandle) =>
  closedStoreNode(opened, handle, task, { nodeId: 'closed-store' });

/** Closes the store under the node, lets it retry for minutes, then stops it. */
async function closeThenStop(
  node: Awaited<ReturnType<typeof nodeOn>>,
  close: () => Promise<void>,
  engine: 'pglite' | 'postgres',
) {
  const { runtime, clock, errors } = node;
  errors.length = 0;
  await close();
  // A command after the close: a typed answer, not `internal`.
  const refused = runtime.submit('bob', task).then(
    () => null,
    (error: unknown) => error,
  );
  // Every tick, heartbeat and pass fails for three virtual minutes.
  await fireFor(clock, 180_000);
  const answer = await within(refused, 'submit on a closed store', SETTLE_DEADLINE_MS);
  expect(answer).toBeInstanceOf(RuntimeCommandError);
  expect(answer).toMatchObject({ code: 'unavailable' });
  expect((answer as Error).cause).toBeInstanceOf(StoreClosedError);
  await within(runtime.stop(), 'stop()', SETTLE_DEADLINE_MS);
  expect(await within(runtime.exited, 'exited', SETTLE_DEADLINE_MS)).toEqual({ kind: 'stopped' });
  expect(errors.map((e) => [(e as Error).constructor.name, (e as { code?: string }).code])).toEqual(
    [['StoreClosedError', 'DB_STORE_CLOSED']],
  );
  expect(errors[0]).toMatchObject({ engine });
}

describe('a store closed before runtime.stop() [pglite]', () => {
  test('the handle closed: one StoreClosedError, then a clean stop', async () => {
    opened.pglite = await migratedPglite();
    const handle = await connect({ pglite: opened.pglite });
    opened.handle = handle;
    await closeThenStop(await nodeOn(handle), () => handle.close(), 'pglite');
  });

  test('the PGlite closed under an open handle: the same', async () => {
    const pglite = await migratedPglite();
    opened.pglite = pglite;
    const handle = await connect({ pglite });
    opened.handle = handle;
    await closeThenStop(await nodeOn(handle), () => pglite.close(), 'pglite');
  });

  test('kysely destroyed (store.db.destroy()) instead of the handle closed: the same', async () => {
    opened.pglite = await migratedPglite();
    const handle = await connect({ pglite: opened.pglite });
    opened.handle = handle;
    await closeThenStop(await nodeOn(handle), () => handle.db.destroy(), 'pglite');
  });
});

describeServer('a store closed before runtime.stop() [postgres server]', () => {
  const server = serverDatabase();
  test('the handle closed: one StoreClosedError, then a clean stop', async () => {
    const handle = await connect({ databaseUrl: server.url, poolMax: 2 });
    opened.handle = handle;
    await closeThenStop(await nodeOn(handle), () => handle.close(), 'postgres');
  });

  test('kysely destroyed (store.db.destroy()) instead of the handle closed: the same', async () => {
    const handle = await connect({ databaseUrl: server.url, poolMax: 2 });
    opened.handle = handle;
    await closeThenStop(await nodeOn(handle), () => handle.db.destroy(), 'postgres');
  });
});
