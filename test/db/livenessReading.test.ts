/**
 * The liveness watch's one statement: the same rows as `listBeats` and the
 * same keys as `heldBootKeys`, read together; without locks, the rows alone
 * and no `pg_locks` (PGlite has no boot lock).
 */
import { afterEach, expect, it } from 'vitest';
import {
  type BootLock,
  beat,
  bootLockKey,
  connect,
  heldBootKeys,
  holdBootLock,
  listBeats,
  readLiveness,
} from '../../src/db/index.js';
import {
  createServerDatabase,
  describeEachEngine,
  TEST_DATABASE_URL_VAR,
  truncateAll,
} from '../support/databases.js';
import { describeServer, serverDatabase } from '../support/serverSuite.js';
import { testBootLockConfig } from './bootLockFixtures.js';

const at = (s: number) => new Date(Date.UTC(2026, 6, 14, 10, 0, s));

/** Three boots of two nodes, written out of start order: a@1 is replaced by a@2. */
async function threeBoots(db: Parameters<typeof beat>[0]): Promise<void> {
  await beat(db, { owner: 'b@1', nodeId: 'b', now: at(5), bootLock: true, staleAfterMs: 10_000 });
  await beat(db, { owner: 'a@1', nodeId: 'a', now: at(0) });
  await beat(db, { owner: 'a@2', nodeId: 'a', now: at(10), bootLock: true });
  await beat(db, { owner: 'a@1', nodeId: 'a', now: at(12) });
}

describeEachEngine('liveness reading, without locks', (getDb) => {
  it('returns the rows listBeats returns, oldest start first, and no lock reading', async () => {
    const { db } = getDb();
    await threeBoots(db);
    const r = await readLiveness(db, { locks: false });
    expect(r.held).toBeNull();
    expect(r.beats).toEqual(await listBeats(db));
    expect(r.beats).toEqual([
      {
        owner: 'a@1',
        nodeId: 'a',
        startedAt: at(0),
        beatAt: at(12),
        replaced: true,
        bootLock: false,
        staleAfterMs: null,
      },
      {
        owner: 'b@1',
        nodeId: 'b',
        startedAt: at(5),
        beatAt: at(5),
        replaced: false,
        bootLock: true,
        staleAfterMs: 10_000,
      },
      {
        owner: 'a@2',
        nodeId: 'a',
        startedAt: at(10),
        beatAt: at(10),
        replaced: false,
        bootLock: true,
        staleAfterMs: null,
      },
    ]);
  });

  it('no rows: no beats', async () => {
    const { db } = getDb();
    expect(await readLiveness(db, { locks: false })).toEqual({ beats: [], held: null });
  });
});

describeServer('liveness reading, with locks [postgres server]', () => {
  const server = serverDatabase();
  const locks: BootLock[] = [];
  afterEach(async () => {
    for (const l of locks.splice(0)) await l.release();
    await truncateAll(server.main.db);
  });

  const hold = async (owner: string) => {
    const l = await holdBootLock(testBootLockConfig(server.url, owner, { pingMs: 1_000 }));
    locks.push(l);
    expect(l.state()).toBe('held');
    return l;
  };

  it('returns the rows of listBeats and the keys of heldBootKeys, in one statement', async () => {
    const { db } = server.main;
    await threeBoots(db);
    await hold('a@2');
    await hold('b@1');
    const r = await readLiveness(db, { locks: true });
    expect(r.beats).toEqual(await listBeats(db));
    expect(r.beats.map((b) => [b.owner, b.replaced, b.bootLock])).toEqual([
      ['a@1', true, false],
      ['b@1', false, true],
      ['a@2', false, true],
    ]);
    expect(r.held).toEqual(await heldBootKeys(db));
    expect(r.held).toEqual(new Set([bootLockKey('a@2'), bootLockKey('b@1')]));
  });

  it('a released lock is gone from the next reading; none held is an empty set, not null', async () => {
    const { db } = server.main;
    await threeBoots(db);
    const l = await hold('b@1');
    expect((await readLiveness(db, { locks: true })).held).toEqual(new Set([bootLockKey('b@1')]));
    await l.release();
    const r = await readLiveness(db, { locks: true });
    expect(r.held).toEqual(new Set());
    expect(r.beats.length).toBe(3);
  });

  it('with no row at all the held keys still come back (a boot whose row went is judged by its lock)', async () => {
    const { db } = server.main;
    await hold('gone@1');
    expect(await readLiveness(db, { locks: true })).toEqual({
      beats: [],
      held: new Set([bootLockKey('gone@1')]),
    });
  });

  it('boot locks of another database are not this one', async () => {
    const created = await createServerDatabase();
    if (created === null) throw new Error(`${TEST_DATABASE_URL_VAR} is not set`);
    const other = await connect({ databaseUrl: created.url });
    try {
      await hold('n4@b1');
      expect(await readLiveness(other.db, { locks: true })).toEqual({ beats: [], held: new Set() });
    } finally {
      await other.close();
      await created.drop();
    }
  });
});
