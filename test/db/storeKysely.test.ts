/**
 * The store's kysely (src/db/storeKysely.ts, src/db/storeDriver.ts): a
 * `destroy()` through any instance of it (the store's own, one derived by
 * `withPlugin`, `withoutPlugins`, `withSchema`, `withTables`, or the one
 * `connection()` hands its callback) closes the store the typed way, so a
 * query on `store.db` afterwards rejects with `StoreClosedError`, not
 * kysely's untyped "driver has already been destroyed"; a second destroy is
 * harmless. And the instances it derives still run queries and
 * transactions. On PGlite and on the Postgres server.
 */
import { PGlite } from '@electric-sql/pglite';
import { CamelCasePlugin, type QueryExecutorProvider, sql } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { connect, type DbHandle, StoreClosedError } from '../../src/db/index.js';
import { StoreKysely } from '../../src/db/storeKysely.js';
import { describeServer, serverDatabase } from '../support/serverSuite.js';

const one = (db: QueryExecutorProvider) => sql<{ n: number }>`select 1 as n`.execute(db);

/** What a query on `db` rejects with (null: it answered). */
const failureOf = (db: QueryExecutorProvider) =>
  one(db).then(
    () => null,
    (error: unknown) => error,
  );

/** Each way to reach `destroy()` on an instance other than `store.db` itself. */
const destroyers: Record<string, (db: StoreKysely) => Promise<void>> = {
  withPlugin: (db) => db.withPlugin(new CamelCasePlugin()).destroy(),
  withoutPlugins: (db) => db.withoutPlugins().destroy(),
  withSchema: (db) => db.withSchema('public').destroy(),
  withTables: (db) => db.withTables<{ scratch: { id: number } }>().destroy(),
  'a derived instance of a derived instance': (db) =>
    db.withSchema('public').withPlugin(new CamelCasePlugin()).destroy(),
  // Not awaited inside: closing the store ends the pool, which waits for
  // the connection this callback holds until it returns.
  'the connection() callback': async (db) => {
    let closed: Promise<void> = Promise.resolve();
    await db.connection().execute(async (conn) => {
      closed = conn.destroy();
    });
    await closed;
  },
};

function storeSuite(open: () => Promise<DbHandle>, engine: 'pglite' | 'postgres') {
  let handle: DbHandle | undefined;
  afterEach(async () => {
    await handle?.close();
    handle = undefined;
  });

  for (const [how, destroy] of Object.entries(destroyers)) {
    test(`destroyed through ${how}: store.db then rejects with StoreClosedError`, async () => {
      handle = await open();
      const db = handle.db as StoreKysely;
      const derived = db.withPlugin(new CamelCasePlugin());
      await destroy(db);
      const error = await failureOf(db);
      expect(error).toBeInstanceOf(StoreClosedError);
      expect(error).toMatchObject({ code: 'DB_STORE_CLOSED', engine });
      // Every other instance of the store hears the same.
      expect(await failureOf(derived)).toBeInstanceOf(StoreClosedError);
      // A second destroy, through a derived instance or the store's own, is harmless.
      await derived.destroy();
      await db.destroy();
    });
  }

  test('derived instances are the store kysely and still query and commit transactions', async () => {
    handle = await open();
    const db = handle.db as StoreKysely;
    for (const derived of [db.withPlugin(new CamelCasePlugin()), db.withSchema('public')]) {
      expect(derived).toBeInstanceOf(StoreKysely);
      expect((await one(derived)).rows).toEqual([{ n: 1 }]);
    }
    // A table every connection sees (a temporary one is its connection's, and
    // the read below may land on another), dropped at the end.
    const scratch = sql.table(`scratch_${process.pid}_${Date.now()}`);
    await sql`create table ${scratch} (id int)`.execute(db);
    // A transaction with a savepoint rolled back: begin, savepoint, rollback
    // to it and commit go through the store's driver.
    const trx = await db.withPlugin(new CamelCasePlugin()).startTransaction().execute();
    await sql`insert into ${scratch} values (1)`.execute(trx);
    const sp = await trx.savepoint('sp').execute();
    await sql`insert into ${scratch} values (2)`.execute(sp);
    await sp.rollbackToSavepoint('sp').execute();
    await trx.commit().execute();
    const ids = (await sql<{ id: number }>`select id from ${scratch}`.execute(db)).rows;
    await sql`drop table ${scratch}`.execute(db);
    expect(ids).toEqual([{ id: 1 }]);
  });
}

describe('the store kysely [pglite]', () => {
  // One instance for every store: a store closes the pool over a PGlite it
  // was given, never the PGlite (its caller's), and an initdb per test cost
  // seconds each.
  let pglite: PGlite;
  beforeAll(async () => {
    pglite = await PGlite.create('memory://');
  });
  afterAll(async () => {
    await pglite.close();
  });
  storeSuite(() => connect({ pglite }), 'pglite');
});

describeServer('the store kysely [postgres server]', () => {
  const server = serverDatabase();
  storeSuite(() => connect({ databaseUrl: server.url, poolMax: 2 }), 'postgres');
});
