/**
 * `DbHandle.listen` on both engines: PGlite in process, and a private
 * PostgreSQL server whose listener backend the tests terminate, freeze and
 * stop, to see it report `lost`, come back by itself and hear again.
 */
import { PGlite } from '@electric-sql/pglite';
import { type Kysely, sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { connect, type DbHandle } from '../../src/db/connect.js';
import type { ListenTimers } from '../../src/db/dedicatedClient.js';
import { ConnectError, ValidationError } from '../../src/db/errors.js';
import type { ListenState } from '../../src/db/listen.js';
import type { Database } from '../../src/db/schema.js';
import { describeWithPrivatePostgres } from '../support/privatePostgres.js';

/** Waits for `check` to hold: a bounded loop, a few ms between tries. */
async function until(what: string, check: () => boolean | Promise<boolean>, deadlineMs = 5_000) {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > deadlineMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

function recorder() {
  const payloads: string[] = [];
  const states: ListenState[] = [];
  return {
    payloads,
    states,
    onPayload: (p: string) => payloads.push(p),
    onState: (s: ListenState) => states.push(s),
  };
}

const notify = (db: Kysely<Database>, channel: string, payload: string) =>
  sql`SELECT pg_notify(${channel}, ${payload})`.execute(db);

describe('listen [pglite]', () => {
  let pglite: PGlite;
  let handle: DbHandle;
  const errors: Error[] = [];
  beforeAll(async () => {
    pglite = await PGlite.create('memory://');
    handle = await connect({ pglite, onPoolError: (e) => errors.push(e) });
  });
  afterAll(async () => {
    await handle.close();
    await pglite.close();
  });

  it('hears a NOTIFY sent through the pool, until unsubscribed', async () => {
    const r = recorder();
    const stop = await handle.listen('jobs', r.onPayload, r.onState);
    expect(r.states).toEqual(['listening']);
    await notify(handle.db, 'jobs', 'one');
    await sql`NOTIFY jobs, 'two'`.execute(handle.db);
    await until('two payloads', () => r.payloads.length === 2);
    expect(r.payloads).toEqual(['one', 'two']);
    await stop();
    await stop();
    await notify(handle.db, 'jobs', 'three');
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(r.payloads).toEqual(['one', 'two']);
  });

  it('rejects a channel that is not a lower-case identifier', async () => {
    await expect(handle.listen('Jobs; DROP TABLE x', () => {})).rejects.toBeInstanceOf(
      ValidationError,
    );
  });

  it('reports a throwing callback to onPoolError and keeps listening', async () => {
    const seen: string[] = [];
    const stop = await handle.listen('throws', (p) => {
      seen.push(p);
      throw new Error(`bad ${p}`);
    });
    await notify(handle.db, 'throws', 'a');
    await notify(handle.db, 'throws', 'b');
    await until('both payloads', () => seen.length === 2);
    expect(errors.map((e) => e.message)).toEqual(['bad a', 'bad b']);
    await stop();
  });

  it('stops its listeners on close, and refuses new ones after', async () => {
    const other = await connect({ pglite });
    const r = recorder();
    await other.listen('closing', r.onPayload);
    await other.close();
    await notify(handle.db, 'closing', 'late');
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(r.payloads).toEqual([]);
    await expect(other.listen('closing', () => {})).rejects.toBeInstanceOf(ConnectError);
  });
});

describeWithPrivatePostgres('listen [private postgres server]', (getServer) => {
  const handles: DbHandle[] = [];
  const poolErrors: Error[] = [];
  let main: DbHandle;
  const open = async (extra: Parameters<typeof connect>[0] = {}) => {
    const h = await connect({
      databaseUrl: getServer().url,
      connectTimeoutMs: 1_000,
      listenRetryMinMs: 20,
      listenRetryMaxMs: 200,
      onPoolError: (e) => poolErrors.push(e),
      ...extra,
    });
    handles.push(h);
    return h;
  };
  const listenerPids = async () =>
    (
      await sql<{ pid: number }>`
        SELECT pid FROM pg_stat_activity WHERE application_name = 'roundtable-listen'`.execute(
        main.db,
      )
    ).rows.map((r) => r.pid);

  beforeAll(async () => {
    main = await open();
  });
  afterAll(async () => {
    for (const h of handles) await h.close();
  });
  // A backend can outlive its client's `end()` by a moment: let each test
  // find only its own listener.
  beforeEach(() => until('no listener backends', async () => (await listenerPids()).length === 0));

  it('hears a NOTIFY from another connection on its own connection, closed on unsubscribe', async () => {
    const r = recorder();
    const stop = await main.listen('jobs', r.onPayload, r.onState);
    expect(r.states).toEqual(['listening']);
    expect(await listenerPids()).toHaveLength(1);
    const sender = new pg.Client({ connectionString: getServer().url });
    await sender.connect();
    try {
      await sender.query(`NOTIFY jobs, 'from another connection'`);
    } finally {
      await sender.end();
    }
    await until('the payload', () => r.payloads.length === 1);
    expect(r.payloads).toEqual(['from another connection']);
    await stop();
    await until(
      'the listener connection to close',
      async () => (await listenerPids()).length === 0,
    );
  });

  it('reports lost when its backend is terminated, then listens again and hears', async () => {
    const r = recorder();
    const stop = await main.listen('jobs', r.onPayload, r.onState);
    const [pid] = await listenerPids();
    await sql`SELECT pg_terminate_backend(${pid}::int)`.execute(main.db);
    await until('lost, then listening', () => r.states.length === 3);
    expect(r.states).toEqual(['listening', 'lost', 'listening']);
    const [again] = await listenerPids();
    expect(again).not.toBe(pid);
    await notify(main.db, 'jobs', 'after');
    await until('the payload', () => r.payloads.includes('after'));
    expect(poolErrors.at(-1)?.message).toMatch(/listener on jobs lost its connection/);
    await stop();
  });

  it('notices a frozen backend through its heartbeat and moves to a new one', async () => {
    const h = await open({ listenHeartbeatMs: 100, queryTimeoutMs: 300 });
    const r = recorder();
    const stop = await h.listen('frozen', r.onPayload, r.onState);
    const [pid] = await listenerPids();
    if (pid === undefined) throw new Error('no listener backend');
    process.kill(pid, 'SIGSTOP');
    try {
      await until('lost, then listening', () => r.states.length === 3);
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    expect(r.states).toEqual(['listening', 'lost', 'listening']);
    await notify(main.db, 'frozen', 'heard');
    await until('the payload', () => r.payloads.includes('heard'));
    await stop();
  });

  it('rides out a server restart: lost while down (even from the start), listening after', async () => {
    const r = recorder();
    const stop = await main.listen('restart', r.onPayload, r.onState);
    await getServer().stop('immediate');
    await until('lost', () => r.states.at(-1) === 'lost');
    const late = recorder();
    const stopLate = await main.listen('late', late.onPayload, late.onState);
    expect(late.states).toEqual(['lost']);
    await getServer().start();
    await until('both listening', () => r.states.length === 3 && late.states.length === 2, 8_000);
    await notify(main.db, 'restart', 'r');
    await notify(main.db, 'late', 'l');
    await until('both payloads', () => r.payloads.length === 1 && late.payloads.length === 1);
    await Promise.all([stop(), stopLate()]);
  });

  it('waits only through the injected timers, doubling its retries up to the cap', async () => {
    const pending: { fn: () => void; ms: number }[] = [];
    const timers: ListenTimers = {
      setTimeout: (fn, ms) => {
        const t = { fn, ms };
        pending.push(t);
        return t;
      },
      clearTimeout: (t) => {
        const i = pending.indexOf(t as (typeof pending)[number]);
        if (i >= 0) pending.splice(i, 1);
      },
    };
    const retries = () => pending.filter((t) => t.ms !== 10_000 && t.ms !== 1_000);
    const fire = async () => {
      const [t] = retries();
      if (t === undefined) throw new Error('no retry scheduled');
      pending.splice(pending.indexOf(t), 1);
      t.fn();
    };
    const h = await open({ timers, listenRetryMinMs: 100, listenRetryMaxMs: 300 });
    await getServer().stop('fast');
    try {
      const r = recorder();
      const stop = await h.listen('manual', r.onPayload, r.onState);
      const delays = [retries()[0]?.ms];
      for (let i = 0; i < 3; i++) {
        await fire();
        await until('the next retry', () => retries().length === 1);
        delays.push(retries()[0]?.ms);
      }
      expect(delays).toEqual([100, 200, 300, 300]);
      expect(r.states).toEqual(['lost']);
      await getServer().start();
      await fire();
      await until('listening', () => r.states.at(-1) === 'listening');
      // Listening, it waits for nothing but its heartbeat.
      expect(pending.map((t) => t.ms)).toEqual([10_000]);
      await stop();
      expect(pending).toEqual([]);
    } finally {
      await getServer().start();
    }
  });
});
