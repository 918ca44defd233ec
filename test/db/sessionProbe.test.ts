import { sql } from 'kysely';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { connect } from '../../src/db/connect.js';
import { REAL_TIMERS } from '../../src/db/dedicatedClient.js';
import { PooledSessionError } from '../../src/db/errors.js';
import { migrate } from '../../src/db/migrations.js';
import * as sessionProbe from '../../src/db/sessionProbe.js';
import { freePort } from '../cli/cliProcess.js';
import { runDocExamples } from '../support/docExamples.js';
import {
  describeWithPgbouncer,
  PERMISSIVE_POOLER,
  pooledDatabase,
} from '../support/privatePgbouncer.js';
import { TENTH_TIMERS } from '../support/scaledTimers.js';
import { describeServer, serverDatabase } from '../support/serverSuite.js';

runDocExamples(new URL('../../src/db/sessionProbe.ts', import.meta.url), sessionProbe);

describeServer('the session probe on the test server', () => {
  const server = serverDatabase();
  /** A probe of a new connection to the server with this NOTIFY: its error, or null. */
  const probeWith = (
    notify: (channel: string, payload: string) => Promise<void>,
    o: { deadlineMs: number; resendMs: number; applicationName?: string },
  ): Promise<unknown> =>
    sessionProbe
      .probeSession({
        client: {
          connectionString: server.url,
          ...(o.applicationName ? { application_name: o.applicationName } : {}),
        },
        notify,
        deadlineMs: o.deadlineMs,
        resendMs: o.resendMs,
        timers: REAL_TIMERS,
        closeTimeoutMs: 1_000,
      })
      .then(
        () => null,
        (e: unknown) => e,
      );

  it('hears its notification: a direct connection is a session', async () => {
    const t0 = performance.now();
    await expect(server.main.probeSession?.()).resolves.toBeUndefined();
    // Well inside the deadline: it returns as the notification lands.
    expect(performance.now() - t0).toBeLessThan(sessionProbe.SESSION_PROBE.deadlineMs);
  });

  it('rejects with the driver’s error, not a verdict, when the server cannot be asked', async () => {
    const port = await freePort();
    const error = await sessionProbe
      .probeSession({
        client: { host: '127.0.0.1', port, user: 'postgres', connectionTimeoutMillis: 2_000 },
        notify: () => Promise.resolve(),
        deadlineMs: 1_000,
        resendMs: 100,
        timers: REAL_TIMERS,
        closeTimeoutMs: 1_000,
      })
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(error).not.toBeInstanceOf(PooledSessionError);
    expect(String(error)).toMatch(/ECONNREFUSED/);
  });

  it('a NOTIFY that fails rejects the probe with its error', async () => {
    const boom = new Error('notify refused');
    expect(await probeWith(() => Promise.reject(boom), { deadlineMs: 5_000, resendMs: 100 })).toBe(
      boom,
    );
  });

  it('a probe connection lost while it waits is the driver’s error, not a verdict', async () => {
    const name = `rt_probe_cut_${process.pid}`;
    const t0 = performance.now();
    // The "NOTIFY" ends the listening backend instead of notifying it.
    const cut = async () => {
      await sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = ${name}`.execute(
        server.main.db,
      );
    };
    const error = await probeWith(cut, { deadlineMs: 5_000, resendMs: 100, applicationName: name });
    expect(error).toBeInstanceOf(Error);
    expect(error).not.toBeInstanceOf(PooledSessionError);
    // Said as the connection went, not at the deadline.
    expect(performance.now() - t0).toBeLessThan(5_000);
  });

  it('sends one NOTIFY at a time, and none after it gave up', async () => {
    // A NOTIFY that takes 100 ms and is never heard (it sends nothing).
    const sends: number[] = [];
    const t0 = performance.now();
    const slow = async () => {
      sends.push(performance.now() - t0);
      await new Promise((r) => setTimeout(r, 100));
    };
    const error = await probeWith(slow, { deadlineMs: 600, resendMs: 50 });
    expect(error).toBeInstanceOf(PooledSessionError);
    // Each 150 ms at the least apart: at most 5 in 600 ms, not 12.
    expect(sends.length).toBeLessThanOrEqual(5);
    for (let i = 1; i < sends.length; i++)
      expect((sends[i] ?? 0) - (sends[i - 1] ?? 0)).toBeGreaterThanOrEqual(140);
    const after = sends.length;
    await new Promise((r) => setTimeout(r, 300));
    expect(sends.length).toBe(after);
  });

  it('a NOTIFY that never comes back is the store being slow, not a verdict', async () => {
    const never = () => new Promise<void>(() => {});
    const error = await probeWith(never, { deadlineMs: 300, resendMs: 50 });
    expect(error).toBeInstanceOf(Error);
    expect(error).not.toBeInstanceOf(PooledSessionError);
    expect(String(error)).toMatch(/too slow/);
  });

  it('leaves a probed connection as it found it: no probe channel, still usable', async () => {
    const c = new pg.Client({ connectionString: server.url });
    await c.connect();
    try {
      const notify = async (channel: string, payload: string) => {
        await sql`SELECT pg_notify(${channel}, ${payload})`.execute(server.main.db);
      };
      await sessionProbe.probeConnection(c, {
        notify,
        ...sessionProbe.SESSION_PROBE,
        timers: REAL_TIMERS,
      });
      const r = await c.query('SELECT pg_listening_channels() AS ch');
      expect(r.rows).toEqual([]);
      // Its own listeners are gone too: only the caller's remain.
      expect(c.listenerCount('notification')).toBe(0);
      expect(c.listenerCount('error')).toBe(0);
    } finally {
      await c.end();
    }
  });

  it('has nothing to probe behind a declared transaction pooler (nor on PGlite: one process)', async () => {
    const pooled = await connect({ databaseUrl: server.url, pooler: 'transaction' });
    try {
      expect(pooled.probeSession).toBeNull();
    } finally {
      await pooled.close();
    }
  });
});

describeWithPgbouncer(
  'the session probe behind a pooler that accepts the startup settings [private pgbouncer]',
  (getPooler, server) => {
    const store = pooledDatabase(getPooler, server, 'roundtable_probe');
    const open = () => store.open({ timers: TENTH_TIMERS });

    it('lets the node in with its settings silently dropped, and the probe says so', async () => {
      const h = await open();
      await migrate(h.db);
      // What the pooler did: the 15 s statement deadline the node sent is not in force.
      const shown = await sql<{ statement_timeout: string }>`SHOW statement_timeout`.execute(h.db);
      expect(shown.rows[0]?.statement_timeout).toBe('0');
      expect(h.settingsNotInForce).toContain('statement_timeout');
      const t0 = performance.now();
      const error = await h.probeSession?.().then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(PooledSessionError);
      const pooled = error as PooledSessionError;
      expect(pooled.code).toBe('DB_POOLED_SESSION');
      // The deadline on the handle's clock (a tenth of real time here), sent again meanwhile.
      expect(pooled.waitedMs).toBe(sessionProbe.SESSION_PROBE.deadlineMs);
      expect(pooled.sent).toBeGreaterThanOrEqual(10);
      expect(performance.now() - t0).toBeLessThan(sessionProbe.SESSION_PROBE.deadlineMs);
      expect(pooled.message).toContain("connect with { pooler: 'transaction' }");
    });
  },
  PERMISSIVE_POOLER,
);

describe('checkEachConnection', () => {
  const client = {} as pg.Client;
  const pooled = new PooledSessionError(5_000, 20);

  it('says a pooler once per stretch of failed attempts, and again after one passed', async () => {
    const said: Error[] = [];
    const answers: Array<Error | null> = [pooled, pooled, null, pooled, new Error('cut')];
    const check = sessionProbe.checkEachConnection(
      async () => {
        const a = answers.shift();
        if (a) throw a;
      },
      (e) => said.push(e),
    );
    await expect(check(client)).rejects.toBe(pooled);
    await expect(check(client)).rejects.toBe(pooled);
    expect(said).toEqual([pooled]);
    await expect(check(client)).resolves.toBeUndefined();
    await expect(check(client)).rejects.toBe(pooled);
    expect(said).toEqual([pooled, pooled]);
    // Any other failure fails the attempt and is the holder's to say (its loss).
    await expect(check(client)).rejects.toThrow('cut');
    expect(said).toHaveLength(2);
  });

  it('asks nothing where there is nothing to ask (PGlite, a declared pooler)', async () => {
    const said: Error[] = [];
    await expect(
      sessionProbe.checkEachConnection(undefined, (e) => said.push(e))(client),
    ).resolves.toBeUndefined();
    expect(said).toEqual([]);
  });
});
