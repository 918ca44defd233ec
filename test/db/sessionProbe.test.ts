/**
 * Whether a connection is a session of its own (src/db/sessionProbe.ts), on
 * the real thing both ways: the test server directly (it is), and a private
 * PgBouncer in transaction mode told to ignore the startup settings (it is
 * not, and nothing else says so: the connect succeeds and the settings are
 * silently gone).
 */
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { connect, type DbHandle } from '../../src/db/connect.js';
import { PooledSessionError } from '../../src/db/errors.js';
import { type ListenTimers, REAL_TIMERS } from '../../src/db/listen.js';
import { migrate } from '../../src/db/migrations.js';
import * as sessionProbe from '../../src/db/sessionProbe.js';
import { freePort } from '../cli/cliProcess.js';
import { admin } from '../support/databases.js';
import { runDocExamples } from '../support/docExamples.js';
import { describeWithPgbouncer, PERMISSIVE_POOLER } from '../support/privatePgbouncer.js';
import { describeServer, serverDatabase } from '../support/serverSuite.js';

runDocExamples(new URL('../../src/db/sessionProbe.ts', import.meta.url), sessionProbe);

/** Every wait a tenth as long: the probe's 5 s deadline is 0.5 s of real time. */
const TENTH_TIMERS: ListenTimers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms / 10),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

describeServer('the session probe on the test server', () => {
  const server = serverDatabase();

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
    await expect(
      sessionProbe.probeSession({
        client: { connectionString: server.url },
        notify: () => Promise.reject(boom),
        deadlineMs: 5_000,
        resendMs: 100,
        timers: REAL_TIMERS,
        closeTimeoutMs: 1_000,
      }),
    ).rejects.toBe(boom);
  });

  it('has nothing to probe on PGlite or behind a declared transaction pooler', async () => {
    const embedded = await connect({ dataDir: 'memory://' });
    const pooled = await connect({ databaseUrl: server.url, pooler: 'transaction' });
    try {
      expect([embedded.probeSession, pooled.probeSession]).toEqual([null, null]);
    } finally {
      await embedded.close();
      await pooled.close();
    }
  });
});

describeWithPgbouncer(
  'the session probe behind a pooler that accepts the startup settings [private pgbouncer]',
  (getPooler, server) => {
    const dbName = `roundtable_probe_${process.pid}_${randomBytes(4).toString('hex')}`;
    const handles: DbHandle[] = [];
    beforeAll(async () => {
      await admin(server, `CREATE DATABASE ${dbName}`);
    });
    afterAll(async () => {
      for (const h of handles) await h.close();
      await admin(server, `DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
    });
    const open = async () => {
      const h = await connect({
        databaseUrl: getPooler().urlFor(dbName),
        connectTimeoutMs: 2_000,
        timers: TENTH_TIMERS,
      });
      handles.push(h);
      return h;
    };

    it('lets the node in with its settings silently dropped, and the probe says so', async () => {
      const h = await open();
      await migrate(h.db);
      // What the pooler did: the 30 s statement deadline the node sent is not in force.
      const shown = await sql<{ statement_timeout: string }>`SHOW statement_timeout`.execute(h.db);
      expect(shown.rows[0]?.statement_timeout).toBe('0');
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
