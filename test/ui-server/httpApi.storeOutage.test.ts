/**
 * The board API over a real runtime whose store stops answering: every
 * route that reads the rows answers 503 `unavailable` ("the store did not
 * answer"), as cancel and retry do, and nothing is logged as an internal
 * error; once the store answers again, so do they.
 */
import type { PGlite } from '@electric-sql/pglite';
import { afterAll, afterEach, beforeAll, expect, test } from 'vitest';
import { connect, type DbHandle } from '../../src/db/index.js';
import { createTestRuntime, type TestRuntime } from '../../src/testing/index.js';
import { migratedPglite } from '../../src/testing/migratedPglite.js';
import { createUiServer, type UiServer } from '../../src/ui-server/createUiServer.js';
import { switchableStore } from '../support/switchableStore.js';
import { ADMIN, ALICE, TOKENS } from './wsHarness.js';

let pglite: PGlite;
let h: TestRuntime | undefined;
let handle: DbHandle | undefined;
let server: UiServer | undefined;
beforeAll(async () => {
  pglite = await migratedPglite();
}, 30_000);
afterEach(async () => {
  await server?.close();
  await h?.close();
  await handle?.close();
  server = h = handle = undefined;
});
afterAll(async () => {
  await pglite.close();
});

test('every read of the rows answers 503 unavailable while the store is down, and 200 once it is back', async () => {
  handle = await connect({ pglite });
  const store = switchableStore(handle.db);
  h = await createTestRuntime({ db: store.db });
  await h.runtime.booted;
  const { task, session } = await h.runtime.submit('alice', {
    title: 't',
    image: 'runner:v1',
    command: ['agent', '30'],
  });
  const logged: Array<{ level: string; msg: string }> = [];
  const log = (level: string) => (_: object, msg: string) => void logged.push({ level, msg });
  server = await createUiServer({
    source: h.runtime,
    commands: h.runtime,
    tokens: { users: { alice: TOKENS.users.alice }, admin: ADMIN },
    port: 0,
    host: '127.0.0.1',
    logger: { info: log('info'), warn: log('warn'), error: log('error') },
  });
  const reads: Array<[string, string]> = [
    ['/api/admin/status', ADMIN],
    [`/api/tasks/${task.id}`, ALICE],
    [`/api/tasks/${task.id}/sessions/${session.id}/output`, ALICE],
    [`/api/tasks/${task.id}/sessions/${session.id}/output.txt`, ALICE],
    ['/api/admin/activity', ADMIN],
    ['/api/admin/nodes', ADMIN],
  ];
  const get = async (path: string, token: string) => {
    const res = await fetch(`${server?.url}${path}`, {
      headers: { authorization: `Bearer ${token}` },
      signal: AbortSignal.timeout(5_000),
    });
    return { status: res.status, body: await res.text() };
  };
  expect((await get(`/api/tasks/${task.id}`, ALICE)).status).toBe(200);

  store.down();
  for (const [path, token] of reads) {
    const got = await get(path, token);
    expect(got.status, path).toBe(503);
    expect(JSON.parse(got.body), path).toEqual({
      error: { code: 'unavailable', message: 'the store did not answer' },
    });
  }
  expect(store.refused).toBeGreaterThanOrEqual(reads.length);
  expect(logged.filter((l) => l.level === 'error')).toEqual([]);

  store.up();
  expect((await get('/api/admin/status', ADMIN)).status).toBe(200);
  expect((await get(`/api/tasks/${task.id}`, ALICE)).status).toBe(200);
});
