import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { MigrationError } from '../../src/db/errors.js';
import { MIGRATIONS, migrate } from '../../src/db/migrations.js';
import { describeEachEngine, raceTest } from '../support/databases.js';

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
});
