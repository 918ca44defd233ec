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
import type { UiServer } from '../../src/ui-server/createUiServer.js';
import { switchableStore } from '../support/switchableStore.js';
import { serveRuntime } from './runtimeServed.js';
import { ADMIN, ALICE } from './wsHarness.js';

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
  server = await serveRuntime(h, { info: log('info'), warn: log('warn'), error: log('error') });
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

test('a submission while the store is down is answered 503 once it has failed for commandOutageMs (10 s), later ones at once; nothing is queued', async () => {
  handle = await connect({ pglite });
  const store = switchableStore(handle.db);
  h = await createTestRuntime({ db: store.db });
  await h.runtime.booted;
  const errors: string[] = [];
  server = await serveRuntime(h, {
    info: () => {},
    warn: () => {},
    error: (_, msg) => errors.push(msg),
  });
  const post = async (title: string) => {
    const res = await fetch(`${server?.url}/api/tasks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ALICE}`, 'content-type': 'application/json' },
      body: JSON.stringify({ title, image: 'runner:v1', command: ['agent', '1'] }),
      signal: AbortSignal.timeout(10_000),
    });
    return {
      status: res.status,
      retryAfter: res.headers.get('retry-after'),
      body: (await res.json()) as { error?: { code: string; message: string } },
    };
  };

  store.down();
  const t0 = h.clock.now();
  let answered: Awaited<ReturnType<typeof post>> | undefined;
  let answeredAfterMs = -1;
  const first = post('during').then((r) => {
    answered = r;
    answeredAfterMs = (h?.clock.now() ?? 0) - t0;
  });
  // The test clock moves only when told: a second of it at a time.
  for (let s = 0; s < 15 && answered === undefined; s++) {
    await h.advance(1_000);
    await new Promise<void>((r) => setTimeout(r, 20));
  }
  await first;
  expect(answered?.status).toBe(503);
  expect(answered?.retryAfter).toBe('2');
  expect(answered?.body.error?.code).toBe('unavailable');
  // Its tick was sent (and failed): the caller hears it may have been applied.
  expect(answered?.body.error?.message).toMatch(
    /^the store did not answer for \d+ ms: enqueue may have been applied \(submit again with the same key to be sure\)$/,
  );
  expect(answeredAfterMs).toBeGreaterThanOrEqual(10_000);
  expect(answeredAfterMs).toBeLessThanOrEqual(12_000);

  // The store still down: the next submission is answered at once, with no time passing.
  const next = await post('later');
  expect(next.status).toBe(503);
  expect(next.body.error?.message).toMatch(/: enqueue was not applied$/);

  store.up();
  await h.advance(1_000);
  const after = await post('after');
  expect(after.status).toBe(201);
  expect((await h.tasks()).map((t) => t.title)).toEqual(['after']);
  // Conditions, not bugs: nothing was logged as an internal error.
  expect(errors).toEqual([]);
});
