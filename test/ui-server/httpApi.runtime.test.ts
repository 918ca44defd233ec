/**
 * POST /api/tasks over the real runtime and store, on both engines: a body
 * the store could not hold (a lone UTF-16 surrogate, which Postgres' json
 * refuses) or a command with no program is a 400 naming the field as sent
 * (checked by the tick's own rules before the runtime is asked), not a 503
 * "the store did not answer"; and the node keeps taking good tasks.
 */
import { pino } from 'pino';
import { afterEach, expect, test } from 'vitest';
import { createTestRuntime, type TestRuntime } from '../../src/testing/index.js';
import { createUiServer, type UiServer } from '../../src/ui-server/createUiServer.js';
import { describeEachEngine } from '../support/databases.js';
import { ALICE, TOKENS } from './wsHarness.js';

let h: TestRuntime | undefined;
let server: UiServer | undefined;
afterEach(async () => {
  await server?.close();
  await h?.close();
  server = undefined;
  h = undefined;
});

const ok = { title: 'fine', image: 'local', command: ['echo', 'x'] };

async function post(body: unknown) {
  const res = await fetch(`${server?.url}/api/tasks`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ALICE}`, 'content-type': 'application/json' },
    // JSON.stringify writes a lone surrogate as its escape (`\ud800`), as a client would.
    body: JSON.stringify(body),
  });
  return {
    status: res.status,
    json: (await res.json()) as { error?: { code: string; message: string } },
  };
}

describeEachEngine('POST /api/tasks over the runtime: input the store cannot hold', (getDb) => {
  test('is a 400 naming the field; good tasks are still taken', async () => {
    h = await createTestRuntime({ db: getDb().db });
    server = await createUiServer({
      source: h.runtime,
      commands: h.runtime,
      tokens: TOKENS,
      port: 0,
      host: '127.0.0.1',
      logger: pino({ level: 'silent' }),
    });
    const cases: Array<[unknown, RegExp]> = [
      [{ ...ok, title: '\ud800 lone' }, /^title: lone UTF-16 surrogate/],
      [{ ...ok, command: ['echo', '\udc00'] }, /^command\.1: lone UTF-16 surrogate/],
      [{ ...ok, env: { A: '\ud83d' } }, /^env\.A: lone UTF-16 surrogate/],
      [{ ...ok, command: [''] }, /^command\.0: empty program name/],
      [{ ...ok, env: { '1A': 'x' } }, /^env\.1A: not an environment variable name/],
    ];
    for (const [body, message] of cases) {
      const r = await post(body);
      expect([r.status, r.json.error?.code], JSON.stringify(body)).toEqual([400, 'bad_request']);
      expect(r.json.error?.message).toMatch(message);
    }
    expect((await post({ ...ok, title: 'emoji 🙂 fine' })).status).toBe(201);
    expect(h.errors).toEqual([]);
  });
});
