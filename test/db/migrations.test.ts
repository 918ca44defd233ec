import { type Kysely, sql } from 'kysely';
import { expect, it } from 'vitest';
import { ADVISORY_LOCKS, LOCK_NAMESPACE } from '../../src/db/advisoryLocks.js';
import { MigrationError } from '../../src/db/errors.js';
import { MIGRATIONS, migrate } from '../../src/db/migrations.js';
import type { Database } from '../../src/db/schema.js';
import { describeEachEngine, raceTest } from '../support/databases.js';

/**
 * Another session takes the migration lock and holds it in an open
 * transaction until `release()`; `holder` settles once it let go.
 */
async function holdMigrationLock(other: Kysely<Database>) {
  let release: () => void = () => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  let locked: () => void = () => {};
  const isLocked = new Promise<void>((resolve) => {
    locked = resolve;
  });
  const holder = other.transaction().execute(async (tx) => {
    await sql`SELECT pg_advisory_xact_lock(${LOCK_NAMESPACE}, ${ADVISORY_LOCKS.migrate})`.execute(
      tx,
    );
    locked();
    await released;
  });
  await isLocked;
  return { release, holder };
}

describeEachEngine('migrate', (getDb, engine) => {
  it('is idempotent', async () => {
    const { db } = getDb();
    expect(await migrate(db)).toEqual({ applied: [], current: MIGRATIONS.at(-1)!.version });
  });

  raceTest(engine)(
    'runs once when two nodes migrate an empty database at the same time',
    async () => {
      const { db, connectAnother } = getDb();
      const other = (await connectAnother()).db;
      await sql`DROP SCHEMA public CASCADE`.execute(db);
      await sql`CREATE SCHEMA public`.execute(db);
      const results = await Promise.all([migrate(db), migrate(other)]);
      const versions = MIGRATIONS.map((m) => m.version);
      expect(results.map((r) => r.applied).sort((a, b) => b.length - a.length)).toEqual([
        versions,
        [],
      ]);
      const rows = await db.selectFrom('schema_migrations').select('version').execute();
      expect(rows.map((r) => r.version)).toEqual(versions);
    },
  );

  it('rolls a failing migration back whole, keeping the cause', async () => {
    const { db } = getDb();
    const broken = [
      ...MIGRATIONS,
      {
        version: 99,
        name: 'broken',
        statements: ['CREATE TABLE half_made (x int)', 'SELECT nope'],
      },
    ];
    const err = await migrate(db, broken).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(MigrationError);
    expect((err as MigrationError).cause).toBeInstanceOf(Error);
    const { rows } = await sql`SELECT to_regclass('half_made') AS t`.execute(db);
    expect(rows).toEqual([{ t: null }]);
    const versions = await db.selectFrom('schema_migrations').select('version').execute();
    expect(versions.map((v) => v.version)).not.toContain(99);
  });

  it('refuses an edited or misordered migration list', async () => {
    const { db } = getDb();
    const first = MIGRATIONS[0]!;
    await expect(migrate(db, [{ ...first, name: 'renamed' }])).rejects.toMatchObject({
      code: 'DB_MIGRATION',
      message: expect.stringMatching(/renamed/),
    });
    await expect(migrate(db, [first, { ...first }])).rejects.toBeInstanceOf(MigrationError);
  });

  it('leaves versions recorded by newer code alone', async () => {
    const { db } = getDb();
    await sql`INSERT INTO schema_migrations (version, name) VALUES (1000, 'from the future')`.execute(
      db,
    );
    expect(await migrate(db)).toEqual({ applied: [], current: 1000 });
  });

  it.runIf(engine === 'postgres')(
    'waits for another process holding the migration lock longer than lock_timeout, then finds nothing to do',
    async () => {
      const { db, connectAnother } = getDb();
      // Another node's migration: it holds the lock past the connection's
      // lock_timeout (5 s), as a step rewriting a large table does.
      const { release, holder } = await holdMigrationLock((await connectAnother()).db);
      const started = Date.now();
      const waiting = migrate(db);
      const late = setTimeout(release, 6_000);
      try {
        expect((await waiting).applied).toEqual([]);
        expect(Date.now() - started).toBeGreaterThanOrEqual(5_500);
      } finally {
        clearTimeout(late);
        release();
        await holder;
      }
    },
    30_000,
  );

  // On PGlite, one backend: only a server has another session to hold the lock.
  it.runIf(engine === 'postgres')(
    'fails with MigrationError once the lock stayed taken past lockWaitMs',
    async () => {
      const { db, connectAnother } = getDb();
      const { release, holder } = await holdMigrationLock((await connectAnother()).db);
      try {
        await expect(migrate(db, MIGRATIONS, { lockWaitMs: 600 })).rejects.toMatchObject({
          code: 'DB_MIGRATION',
          message: expect.stringMatching(/held the migration lock for more than 600 ms/),
        });
      } finally {
        release();
        await holder;
      }
    },
  );
});
