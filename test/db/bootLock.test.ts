/**
 * The boot lock on the Postgres server: held on its own connection, seen in
 * `pg_locks`, gone the moment the connection goes, taken again after a cut,
 * and `busy` (never doubled) while another session holds the key.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type BootLock,
  type BootLockState,
  bootLockKey,
  connect,
  type DbHandle,
  heldBootKeys,
  holdBootLock,
} from '../../src/db/index.js';
import { REAL_TIMERS } from '../../src/db/listen.js';
import { createServerDatabase, TEST_DATABASE_URL_VAR } from '../support/databases.js';

const serverUrl = process.env[TEST_DATABASE_URL_VAR] ?? '';
const describeServer = serverUrl !== '' || process.env.CI === 'true' ? describe : describe.skip;

/** Waits for real I/O until `done()`; a deadline, not a sleep. */
async function until(done: () => Promise<boolean> | boolean, what: string, ms = 15_000) {
  const deadline = Date.now() + ms;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describeServer('boot lock [postgres server]', () => {
  let url = '';
  let drop: (() => Promise<void>) | undefined;
  let h: DbHandle;
  const locks: BootLock[] = [];
  beforeAll(async () => {
    const created = await createServerDatabase();
    if (created === null) throw new Error(`CI=true but ${TEST_DATABASE_URL_VAR} is not set`);
    url = created.url;
    drop = created.drop;
    h = await connect({ databaseUrl: url });
  }, 60_000);
  afterAll(async () => {
    for (const l of locks) await l.release();
    await h?.close();
    await drop?.();
  });

  const hold = async (owner: string, states: BootLockState[] = []) => {
    const l = await holdBootLock({
      client: { connectionString: url, query_timeout: 2_000, connectionTimeoutMillis: 5_000 },
      owner,
      pingMs: 100,
      retryMinMs: 20,
      retryMaxMs: 200,
      closeTimeoutMs: 2_000,
      timers: REAL_TIMERS,
      onState: (s) => states.push(s),
      onError: () => undefined,
    });
    locks.push(l);
    return l;
  };

  it('is held on its own connection and shows in pg_locks; a release frees it at once', async () => {
    const l = await hold('n1@b1');
    expect(l.state()).toBe('held');
    expect((await heldBootKeys(h.db)).has(bootLockKey('n1@b1'))).toBe(true);
    await l.release();
    expect((await heldBootKeys(h.db)).has(bootLockKey('n1@b1'))).toBe(false);
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
    expect((await heldBootKeys(h.db)).has(bootLockKey('n2@b1'))).toBe(true);
    second.drop();
    await until(
      async () => !(await heldBootKeys(h.db)).has(bootLockKey('n2@b1')),
      'a dropped socket to free the lock',
    );
  });

  it('a session ended by the server (pg_terminate_backend) is lost, then held again', async () => {
    const states: BootLockState[] = [];
    const l = await hold('n3@b1', states);
    const { rows } = await sql<{ pid: number }>`
      SELECT pid FROM pg_stat_activity
      WHERE application_name = 'roundtable-bootlock' AND datname = current_database()`.execute(
      h.db,
    );
    await sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
      WHERE application_name = 'roundtable-bootlock' AND datname = current_database()`.execute(
      h.db,
    );
    expect(rows.length).toBeGreaterThan(0);
    await until(() => states.includes('lost') && l.state() === 'held', 'lost, then held again');
    expect((await heldBootKeys(h.db)).has(bootLockKey('n3@b1'))).toBe(true);
  });

  it('boot locks of another database are not this one', async () => {
    const other = await connect({ databaseUrl: serverUrl });
    try {
      await hold('n4@b1');
      expect((await heldBootKeys(other.db)).has(bootLockKey('n4@b1'))).toBe(false);
    } finally {
      await other.close();
    }
  });
});
