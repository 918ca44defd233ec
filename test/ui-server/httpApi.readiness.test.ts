/**
 * GET /readyz over a real runtime: 200 when the node is booted, takes
 * grants, its store answers and it is not stopping; else 503 naming each
 * reason. On PGlite the store is switched off; on the Postgres server it is
 * cut through a proxy, where a flood of probes sends one query, not one each.
 */
import type { PGlite } from '@electric-sql/pglite';
import type { KyselyPlugin } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { connect, type Db, type DbHandle } from '../../src/db/index.js';
import { createTestRuntime, type TestRuntime } from '../../src/testing/index.js';
import { migratedPglite } from '../../src/testing/migratedPglite.js';
import type { UiServer } from '../../src/ui-server/createUiServer.js';
import { type FreezableProxy, startFreezableProxy } from '../support/freezableProxy.js';
import { describeServer, serverDatabase } from '../support/serverSuite.js';
import { switchableStore } from '../support/switchableStore.js';
import { serveRuntime } from './runtimeServed.js';

let h: TestRuntime | undefined;
let handle: DbHandle | undefined;
let server: UiServer | undefined;
let proxy: FreezableProxy | undefined;
afterEach(async () => {
  proxy?.thaw();
  await server?.close();
  await h?.close();
  await handle?.close();
  await proxy?.close();
  server = h = handle = proxy = undefined;
});

/** /readyz as a load balancer asks it: no token, with a deadline of its own. */
async function probe(method: 'GET' | 'HEAD' = 'GET') {
  const res = await fetch(`${server?.url}/readyz`, { method, signal: AbortSignal.timeout(5_000) });
  const text = await res.text();
  return { status: res.status, body: text === '' ? null : (JSON.parse(text) as unknown), res };
}

/** Counts the readiness probe's `SELECT 1`s among the runtime's queries. */
function countingPings(db: Db) {
  let pings = 0;
  const plugin: KyselyPlugin = {
    transformQuery: (args) => {
      if (JSON.stringify(args.node).includes('"SELECT 1"')) pings += 1;
      return args.node;
    },
    transformResult: async (args) => args.result,
  };
  return { db: db.withPlugin(plugin), pings: () => pings };
}

/**
 * Moves the runtime's clock by `ms` without settling (the harness's advance
 * waits for the queries its actors started, which a frozen store never answers).
 */
function moveClock(t: TestRuntime, ms: number): void {
  const target = t.clock.now() + ms;
  while (t.clock.fireNext(target)) {
    // fires each timer due by then, in order
  }
}

/** Moves the runtime's clock past the probe's deadline while `pending` waits on it. */
async function pastDeadline<T>(t: TestRuntime, pending: Promise<T>): Promise<T> {
  let done = false;
  void pending.finally(() => {
    done = true;
  });
  for (let i = 0; i < 40 && !done; i++) {
    moveClock(t, 250);
    await new Promise<void>((r) => setTimeout(r, 25));
  }
  return pending;
}

describe('/readyz on PGlite', () => {
  let pglite: PGlite;
  beforeAll(async () => {
    pglite = await migratedPglite();
  }, 30_000);
  afterAll(async () => {
    await pglite.close();
  });

  test('200 when ready (GET and HEAD, no token); 503 store_unavailable while the store is down; 503 stopping once stopping', async () => {
    handle = await connect({ pglite });
    const store = switchableStore(handle.db);
    h = await createTestRuntime({ db: store.db });
    await h.runtime.booted;
    server = await serveRuntime(h);

    const ok = await probe();
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ ready: true, reasons: [] });
    expect(ok.res.headers.get('cache-control')).toBe('no-store');
    const head = await probe('HEAD');
    expect([head.status, head.body]).toEqual([200, null]);
    // Liveness is another question: /healthz answers 200 all along.
    store.down();
    await h.advance(1_000);
    const down = await probe();
    expect(down.status).toBe(503);
    expect(down.body).toEqual({
      ready: false,
      reasons: ['store_unavailable'],
      error: { code: 'not_ready', message: 'not ready: store_unavailable' },
    });
    expect((await probe('HEAD')).status).toBe(503);
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);

    store.up();
    await h.advance(1_000);
    expect((await probe()).status).toBe(200);

    const stopping = h.runtime.stop();
    const during = await probe();
    expect(during.status).toBe(503);
    expect((during.body as { reasons: string[] }).reasons).toContain('stopping');
    await stopping;
    expect((await probe()).body).toMatchObject({ ready: false, reasons: ['stopping'] });
  });

  test('concurrent probes share one query', async () => {
    handle = await connect({ pglite });
    const counted = countingPings(handle.db);
    h = await createTestRuntime({ db: counted.db });
    await h.runtime.booted;
    server = await serveRuntime(h);
    await h.advance(1_000);
    const before = counted.pings();
    const answers = await Promise.all(Array.from({ length: 50 }, () => probe()));
    expect(new Set(answers.map((a) => a.status))).toEqual(new Set([200]));
    expect(counted.pings() - before).toBe(1);
  });
});

describeServer('/readyz on the Postgres server', () => {
  const database = serverDatabase();

  test('a store cut through a proxy: 503 store_timeout by the deadline, a flood sends no more queries, 200 once it answers', async () => {
    const target = new URL(database.url);
    proxy = await startFreezableProxy({ host: target.hostname, port: Number(target.port || 5432) });
    const viaProxy = new URL(database.url);
    viaProxy.host = `127.0.0.1:${proxy.port}`;
    handle = await connect({ databaseUrl: viaProxy.toString(), poolMax: 4 });
    const counted = countingPings(handle.db);
    h = await createTestRuntime({ db: counted.db });
    await h.runtime.booted;
    server = await serveRuntime(h);
    expect((await probe()).status).toBe(200);
    await h.advance(1_000);

    proxy.freeze();
    const before = counted.pings();
    // A hostile flood, all at once, while the store is silent.
    const flood = Promise.all(Array.from({ length: 200 }, () => probe()));
    const answers = await pastDeadline(h, flood);
    expect(new Set(answers.map((a) => a.status))).toEqual(new Set([503]));
    expect(
      new Set(answers.map((a) => JSON.stringify((a.body as { reasons: string[] }).reasons))),
    ).toEqual(new Set(['["store_timeout"]']));
    // Past the answer's freshness the query is still out: no second one.
    moveClock(h, 5_000);
    const later = await Promise.all(Array.from({ length: 50 }, () => probe()));
    expect(new Set(later.map((a) => a.status))).toEqual(new Set([503]));
    expect(counted.pings() - before).toBe(1);

    proxy.thaw();
    let back = await probe();
    for (let i = 0; i < 40 && back.status !== 200; i++) {
      await h.advance(1_000);
      await new Promise<void>((r) => setTimeout(r, 50));
      back = await probe();
    }
    expect(back.body).toEqual({ ready: true, reasons: [] });
  }, 60_000);
});
