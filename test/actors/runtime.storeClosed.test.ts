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
import type { PGlite } from '@electric-sql/pglite';
import { afterEach, describe, expect, test } from 'vitest';
import { createRuntime } from '../../src/actors/runtime.js';
import { type Runtime, RuntimeCommandError } from '../../src/actors/runtimeTypes.js';
import { SimulatedBackend } from '../../src/containers/simulated/SimulatedBackend.js';
import { SimulatedCluster } from '../../src/containers/simulated/SimulatedCluster.js';
import { connect, type DbHandle, migrate, StoreClosedError } from '../../src/db/index.js';
import { TestClock } from '../../src/testing/index.js';
import { migratedPglite } from '../../src/testing/migratedPglite.js';
import { describeServer, serverDatabase } from '../support/serverSuite.js';
import { within } from '../support/within.js';

const task = { title: 't', image: 'runner:v1', command: ['agent', '30'] };

/** Real time a promise may take to settle before the test fails. */
const SETTLE_DEADLINE_MS = 5_000;

let opened: { runtime?: Runtime; handle?: DbHandle; pglite?: PGlite } = {};
afterEach(async () => {
  opened.runtime?.kill();
  await opened.handle?.close();
  if (opened.pglite?.closed === false) await opened.pglite.close();
  opened = {};
});

async function turns(n = 50) {
  for (let i = 0; i < n; i++) await new Promise<void>((r) => setImmediate(r));
}

/** A node on `handle` with a job running, and what its onError was told. */
async function nodeOn(handle: DbHandle) {
  await migrate(handle.db);
  const clock = new TestClock(Date.parse('2026-01-01T00:00:00Z'));
  const errors: unknown[] = [];
  const runtime = await createRuntime({
    db: handle.db,
    backend: new SimulatedBackend(new SimulatedCluster({ clock })),
    clock,
    nodeId: 'closed-store',
    onError: (error) => errors.push(error),
  });
  opened.runtime = runtime;
  await within(runtime.booted, 'booted', SETTLE_DEADLINE_MS);
  await within(runtime.submit('ann', task), 'submit', SETTLE_DEADLINE_MS);
  return { runtime, clock, errors };
}

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
  const until = clock.now() + 180_000;
  for (let due = clock.nextDue(until); due !== null; due = clock.nextDue(until)) {
    clock.fireNext(due);
    await turns(5);
  }
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
