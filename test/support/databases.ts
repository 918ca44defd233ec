/**
 * Runs one DB-backed suite over both engines, the way kysely runs one suite
 * over every dialect:
 *
 * - PGlite, in memory: one instance per test file (initdb costs seconds),
 *   migrated once, with every table truncated before each test.
 * - The Postgres server named by `ROUNDTABLE_TEST_DATABASE_URL`: a database
 *   created for this run under a random name, migrated, truncated before each
 *   test, and dropped after. Without the variable the variant is reported as
 *   skipped with the reason in its title; with `CI=true` it fails instead, so
 *   CI cannot silently stop testing the server.
 *
 * @example
 * ```ts
 * describeEachEngine('tasks', (getDb) => {
 *   it('creates', async () => {
 *     const { db } = getDb();
 *     await createTaskWithSession(db, { ... });
 *   });
 * });
 * ```
 */
import { randomBytes } from 'node:crypto';
import type { PGlite } from '@electric-sql/pglite';
import { type Kysely, sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, it } from 'vitest';
import { connect, type DbHandle, type Engine } from '../../src/db/connect.js';
import { migrate } from '../../src/db/migrations.js';
import type { Database } from '../../src/db/schema.js';
import { migratedPglite } from '../../src/testing/migratedPglite.js';

export const TEST_DATABASE_URL_VAR = 'ROUNDTABLE_TEST_DATABASE_URL';

/** What a suite body gets from `getDb()` inside its tests and hooks. */
export interface TestDatabase {
  db: Kysely<Database>;
  engine: Engine;
  /**
   * Another connection pool to the same database, for races between "nodes".
   * On the server: a real second pool (closed after the suite). On PGlite:
   * the same pool, because PGlite has a single backend and two pools over it
   * would interleave their transactions; "two nodes" there run one statement
   * after the other, so a race test must use {@link raceTest}.
   */
  connectAnother(): Promise<DbHandle>;
}

/** A suite body; `engine` is known when the tests are declared. */
export type SuiteBody = (getDb: () => TestDatabase, engine: Engine) => void;

/**
 * `it` for a test that races two connections: it runs on the server only.
 * On PGlite `connectAnother()` is the same single backend, so the "race"
 * would be sequential and the test would pass without testing one.
 */
export function raceTest(engine: Engine): ReturnType<typeof it.runIf> {
  return it.runIf(engine === 'postgres');
}

let sharedPglite: Promise<PGlite> | undefined;
let closeRegistered = false;

function pgliteForThisFile(): Promise<PGlite> {
  sharedPglite ??= migratedPglite();
  if (!closeRegistered) {
    closeRegistered = true;
    afterAll(async () => {
      const instance = await sharedPglite;
      sharedPglite = undefined;
      await instance?.close();
    });
  }
  return sharedPglite;
}

/** Empties every table but the migration history: cheaper than a new instance. */
export async function truncateAll(db: Kysely<Database>): Promise<void> {
  const { rows } = await sql<{ tablename: string }>`
    SELECT tablename FROM pg_tables
    WHERE schemaname = 'public' AND tablename <> 'schema_migrations'`.execute(db);
  if (rows.length === 0) return;
  const list = rows.map((r) => `"${r.tablename}"`).join(', ');
  await sql.raw(`TRUNCATE ${list} RESTART IDENTITY CASCADE`).execute(db);
}

/** Runs `body` once per engine. */
export function describeEachEngine(name: string, body: SuiteBody): void {
  describePglite(name, body);
  describeServer(name, body);
}

function describePglite(name: string, body: SuiteBody): void {
  const pglite = pgliteForThisFile();
  describe(`${name} [pglite]`, () => {
    let handle: DbHandle | undefined;
    beforeAll(async () => {
      handle = await connect({ pglite: await pglite });
      await migrate(handle.db);
    });
    afterAll(async () => {
      await handle?.close();
    });
    beforeEach(async () => {
      if (handle) await truncateAll(handle.db);
    });
    body(() => {
      const h = handle;
      if (h === undefined) throw new Error('getDb() called outside a test of this suite');
      return {
        db: h.db,
        engine: 'pglite',
        connectAnother: async () => ({
          db: h.db,
          engine: 'pglite',
          listen: h.listen,
          holdBootLock: null,
          holdLeaderLock: null,
          probeSession: null,
          settingsNotInForce: [],
          pooler: 'none',
          close: async () => {},
        }),
      };
    }, 'pglite');
  });
}

function describeServer(name: string, body: SuiteBody): void {
  const adminUrl = process.env[TEST_DATABASE_URL_VAR];
  if (adminUrl === undefined || adminUrl === '') {
    const title = `${name} [postgres server] (set ${TEST_DATABASE_URL_VAR} to run)`;
    if (process.env.CI === 'true') {
      describe(title, () => {
        it('runs in CI', () => {
          throw new Error(
            `CI=true but ${TEST_DATABASE_URL_VAR} is not set: the server suite must run`,
          );
        });
      });
    } else {
      describe.skip(title, () => body(unavailable, 'postgres'));
    }
    return;
  }

  describe(`${name} [postgres server]`, () => {
    const dbName = `roundtable_test_${process.pid}_${randomBytes(6).toString('hex')}`;
    const url = withDatabase(adminUrl, dbName);
    const handles: DbHandle[] = [];
    let main: DbHandle | undefined;
    beforeAll(async () => {
      await admin(adminUrl, `CREATE DATABASE ${dbName}`);
      main = await connect({ databaseUrl: url });
      handles.push(main);
      await migrate(main.db);
    });
    afterAll(async () => {
      for (const h of handles) await h.close();
      await admin(adminUrl, `DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
    });
    beforeEach(async () => {
      if (main) await truncateAll(main.db);
    });
    body(() => {
      const h = main;
      if (h === undefined) throw new Error('getDb() called outside a test of this suite');
      return {
        db: h.db,
        engine: 'postgres',
        connectAnother: async () => {
          const another = await connect({ databaseUrl: url });
          handles.push(another);
          return another;
        },
      };
    }, 'postgres');
  });
}

function unavailable(): TestDatabase {
  throw new Error(`${TEST_DATABASE_URL_VAR} is not set`);
}

/** The same server URL, naming another database. */
export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

/** One statement on a connection of its own (CREATE / DROP DATABASE), with a connect deadline. */
export async function admin(url: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

/**
 * A database of its own on the server named by `ROUNDTABLE_TEST_DATABASE_URL`
 * (migrated), for tests whose nodes are real processes: they need a URL,
 * not a pool. Null without the variable (the caller skips, or fails in CI).
 */
export async function createServerDatabase(): Promise<{
  url: string;
  drop(): Promise<void>;
} | null> {
  const adminUrl = process.env[TEST_DATABASE_URL_VAR];
  if (adminUrl === undefined || adminUrl === '') return null;
  const dbName = `roundtable_test_${process.pid}_${randomBytes(6).toString('hex')}`;
  const url = withDatabase(adminUrl, dbName);
  await admin(adminUrl, `CREATE DATABASE ${dbName}`);
  const h = await connect({ databaseUrl: url });
  try {
    await migrate(h.db);
  } finally {
    await h.close();
  }
  return {
    url,
    drop: () => admin(adminUrl, `DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`),
  };
}
