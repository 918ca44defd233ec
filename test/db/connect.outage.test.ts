/**
 * The store against a real server that goes away: a private PostgreSQL the
 * suite creates (initdb/pg_ctl on its own port), stopped and started under a
 * live pool, plus each deadline made to fire. Issue 14, item 5.
 */
import { type Kysely, sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { connect, type DbHandle } from '../../src/db/connect.js';
import type { Database } from '../../src/db/schema.js';
import { DbTimeoutError, isTransientDbError } from '../../src/db/transientErrors.js';
import { describeWithPrivatePostgres } from '../support/privatePostgres.js';

/** How long the pool may take to answer once the server is back. */
const RECOVERY_DEADLINE_MS = 10_000;

/** Rejection of `p`, or a failure when it resolves: these queries must not succeed. */
async function rejection(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => {
      throw new Error('expected the query to fail');
    },
    (error: unknown) => error,
  );
}

/** Polls `SELECT 1` until it answers: a bounded loop, a few ms between tries. */
async function untilAnswers(db: Kysely<Database>): Promise<{ tries: number; ms: number }> {
  const started = Date.now();
  for (let tries = 1; ; tries++) {
    try {
      await sql`SELECT 1`.execute(db);
      return { tries, ms: Date.now() - started };
    } catch (error) {
      // Only conditions may appear while the server comes back; a bug must fail the test.
      expect(isTransientDbError(error), String(error)).toBe(true);
      if (Date.now() - started > RECOVERY_DEADLINE_MS) throw error;
      await new Promise((r) => setTimeout(r, 20));
    }
  }
}

describeWithPrivatePostgres('connect [private postgres server]', (getServer) => {
  const poolErrors: Error[] = [];
  const handles: DbHandle[] = [];
  const open = async (extra: Parameters<typeof connect>[0] = {}) => {
    const handle = await connect({
      databaseUrl: getServer().url,
      connectTimeoutMs: 1_000,
      onPoolError: (e) => poolErrors.push(e),
      ...extra,
    });
    handles.push(handle);
    return handle;
  };
  let main: DbHandle;

  beforeAll(async () => {
    main = await open({ poolMax: 4 });
    await sql`CREATE TABLE locked (id int PRIMARY KEY)`.execute(main.db);
  });
  afterAll(async () => {
    for (const h of handles) await h.close();
  });

  it('sends the deadlines to the server with each connection', async () => {
    const { rows } = await sql<{ s: string; l: string; i: string }>`
      SELECT current_setting('statement_timeout') AS s, current_setting('lock_timeout') AS l,
             current_setting('idle_in_transaction_session_timeout') AS i`.execute(main.db);
    expect(rows[0]).toEqual({ s: '15s', l: '5s', i: '30s' });
  });

  it.each(['fast', 'immediate'] as const)(
    'fails transiently while the server is down (-m %s), then the same pool answers again',
    async (mode) => {
      // Fill the pool so restart finds idle and busy connections alike.
      await Promise.all([1, 2, 3].map(() => sql`SELECT pg_sleep(0.05)`.execute(main.db)));
      const inFlight = rejection(sql`SELECT pg_sleep(5)`.execute(main.db));
      await new Promise((r) => setTimeout(r, 100));
      poolErrors.length = 0;

      await getServer().stop(mode);
      const whileDown = [await inFlight, await rejection(sql`SELECT 1`.execute(main.db))];
      for (const error of whileDown) expect(isTransientDbError(error), String(error)).toBe(true);

      await getServer().start();
      const { ms } = await untilAnswers(main.db);
      expect(ms).toBeLessThan(RECOVERY_DEADLINE_MS);
      // Every pooled connection is usable again, not just the first one out.
      const rows = await Promise.all(
        [1, 2, 3, 4].map(
          async (n) =>
            (await sql<{ n: number }>`SELECT ${n}::int AS n`.execute(main.db)).rows[0]?.n,
        ),
      );
      expect(rows).toEqual([1, 2, 3, 4]);
      // The idle connections' errors went to onPoolError, not to an uncaught exception.
      expect(poolErrors.length).toBeGreaterThan(0);
      for (const error of poolErrors) expect(isTransientDbError(error), String(error)).toBe(true);
    },
  );

  it('cancels a hung statement past statementTimeoutMs with a typed timeout', async () => {
    const { db } = await open({ statementTimeoutMs: 200, poolMax: 1 });
    const started = Date.now();
    const error = await rejection(sql`SELECT pg_sleep(10)`.execute(db));
    expect(error).toBeInstanceOf(DbTimeoutError);
    expect(error).toMatchObject({ code: 'DB_TIMEOUT', kind: 'statement' });
    expect((error as DbTimeoutError).cause).toMatchObject({ code: '57014' });
    expect(isTransientDbError(error)).toBe(true);
    expect(Date.now() - started).toBeLessThan(3_000);
    expect((await sql<{ n: number }>`SELECT 1 AS n`.execute(db)).rows).toEqual([{ n: 1 }]);
  });

  it('gives up on a silent server past queryTimeoutMs and discards that connection', async () => {
    // statementTimeoutMs 0: the server never cancels, as when it is hung.
    const { db } = await open({ statementTimeoutMs: 0, queryTimeoutMs: 300, poolMax: 1 });
    const started = Date.now();
    const error = await rejection(sql`SELECT pg_sleep(3)`.execute(db));
    expect(error).toMatchObject({ code: 'DB_TIMEOUT', kind: 'client' });
    expect(Date.now() - started).toBeLessThan(2_000);
    // With one connection, the next query would wait out the sleep if the
    // stuck connection had gone back to the pool.
    const next = Date.now();
    await sql`SELECT 1`.execute(db);
    expect(Date.now() - next).toBeLessThan(1_500);
  });

  it('fails a wait for a pooled connection past connectTimeoutMs with a typed timeout', async () => {
    const { db } = await open({ connectTimeoutMs: 200, poolMax: 1 });
    const busy = sql`SELECT pg_sleep(1)`.execute(db);
    const error = await rejection(sql`SELECT 1`.execute(db));
    expect(error).toMatchObject({ code: 'DB_TIMEOUT', kind: 'connect' });
    expect(isTransientDbError(error)).toBe(true);
    await busy;
  });

  it('fails a lock wait past lockTimeoutMs with a typed timeout', async () => {
    const holder = new pg.Client({ connectionString: getServer().url });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('LOCK TABLE locked IN ACCESS EXCLUSIVE MODE');
      const { db } = await open({ lockTimeoutMs: 200 });
      const started = Date.now();
      const error = await rejection(sql`SELECT * FROM locked`.execute(db));
      expect(error).toMatchObject({ code: 'DB_TIMEOUT', kind: 'lock' });
      expect((error as DbTimeoutError).cause).toMatchObject({ code: '55P03' });
      expect(Date.now() - started).toBeLessThan(3_000);
    } finally {
      await holder.end();
    }
  });

  it('ends a transaction left idle past idleInTransactionTimeoutMs, transiently', async () => {
    const { db } = await open({ idleInTransactionTimeoutMs: 200, poolMax: 1 });
    const error = await rejection(
      db.transaction().execute(async (tx) => {
        await sql`SELECT 1`.execute(tx);
        await new Promise((r) => setTimeout(r, 600));
        await sql`SELECT 1`.execute(tx);
      }),
    );
    expect(error).toMatchObject({ code: 'DB_TIMEOUT', kind: 'idle_in_transaction' });
    expect(isTransientDbError(error)).toBe(true);
    await untilAnswers(db);
  });

  it('a database that takes no sessions for now (55000 at connect) is an outage, not a bug', async () => {
    await sql`CREATE DATABASE closing`.execute(main.db);
    const url = new URL(getServer().url);
    url.pathname = '/closing';
    const { db } = await open({ databaseUrl: url.toString(), poolMax: 1 });
    await sql`SELECT 1`.execute(db);
    await sql`ALTER DATABASE closing ALLOW_CONNECTIONS false`.execute(main.db);
    await sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = 'closing'`.execute(
      main.db,
    );
    // The pooled connection dies first (57P01 or a closed socket); the new
    // one is refused with 55000, which other statements share as a code.
    const seen: unknown[] = [];
    for (let i = 0; i < 5 && !seen.some((e) => (e as { code?: unknown }).code === '55000'); i++)
      seen.push(await rejection(sql`SELECT 1`.execute(db)));
    expect(seen.map((e) => (e as { code?: unknown }).code)).toContain('55000');
    for (const error of seen) expect(isTransientDbError(error), String(error)).toBe(true);
    await sql`ALTER DATABASE closing ALLOW_CONNECTIONS true`.execute(main.db);
    await untilAnswers(db);
  });
});
