/**
 * The boot lock on the Postgres server: held on its own connection, seen in
 * `pg_locks`, gone the moment the connection goes, taken again after a cut,
 * and `busy` (never doubled) while another session holds the key.
 */
import { sql } from 'kysely';
import { afterAll, expect, it } from 'vitest';
import {
  type BootLock,
  type BootLockState,
  bootLockKey,
  connect,
  heldBootKeys,
  holdBootLock,
} from '../../src/db/index.js';
import { TEST_DATABASE_URL_VAR } from '../support/databases.js';
import { describeServer, serverDatabase, until } from '../support/serverSuite.js';
import { testBootLockConfig } from './bootLockFixtures.js';

describeServer('boot lock [postgres server]', () => {
  const server = serverDatabase();
  const locks: BootLock[] = [];
  afterAll(async () => {
    for (const l of locks) await l.release();
  });

  const hold = async (owner: string, states: BootLockState[] = []) => {
    const l = await holdBootLock(
      testBootLockConfig(server.url, owner, { pingMs: 100, onState: (s) => states.push(s) }),
    );
    locks.push(l);
    return l;
  };

  it('is held on its own connection and shows in pg_locks; a release frees it at once', async () => {
    const l = await hold('n1@b1');
    expect(l.state()).toBe('held');
    expect((await heldBootKeys(server.main.db)).has(bootLockKey('n1@b1'))).toBe(true);
    await l.release();
    expect((await heldBootKeys(server.main.db)).has(bootLockKey('n1@b1'))).toBe(false);
  });

  it('a second holder of the same key is busy, never a second owner, and gets it once the first is gone', async () => {
    const first = await hold('n2@b1');
    const states: BootLockState[] = [];
    const second = await hold('n2@b1', states);
    expect(first.state()).toBe('held');
    expect(second.state()).toBe('busy');
    first.drop();
    await until(() => second.state() === 'held', 'the second holder to take the lock');
    expect(states).toEqual(['busy', 'held']);
    expect((await heldBootKeys(server.main.db)).has(bootLockKey('n2@b1'))).toBe(true);
    second.drop();
    await until(
      async () => !(await heldBootKeys(server.main.db)).has(bootLockKey('n2@b1')),
      'a dropped socket to free the lock',
    );
  });

  it('a session ended by the server (pg_terminate_backend) is lost, then held again', async () => {
    const states: BootLockState[] = [];
    const l = await hold('n3@b1', states);
    const { rows } = await sql<{ pid: number }>`
      SELECT pid FROM pg_stat_activity
      WHERE application_name = 'roundtable-bootlock' AND datname = current_database()`.execute(
      server.main.db,
    );
    await sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
      WHERE application_name = 'roundtable-bootlock' AND datname = current_database()`.execute(
      server.main.db,
    );
    expect(rows.length).toBeGreaterThan(0);
    await until(() => states.includes('lost') && l.state() === 'held', 'lost, then held again');
    expect((await heldBootKeys(server.main.db)).has(bootLockKey('n3@b1'))).toBe(true);
  });

  it('boot locks of another database are not this one', async () => {
    const other = await connect({ databaseUrl: process.env[TEST_DATABASE_URL_VAR] ?? '' });
    try {
      await hold('n4@b1');
      expect((await heldBootKeys(other.db)).has(bootLockKey('n4@b1'))).toBe(false);
    } finally {
      await other.close();
    }
  });
});
