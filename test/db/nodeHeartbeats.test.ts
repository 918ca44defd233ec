import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { ADVISORY_LOCKS, LOCK_NAMESPACE } from '../../src/db/advisoryLocks.js';
import { ValidationError } from '../../src/db/errors.js';
import * as nodeHeartbeats from '../../src/db/nodeHeartbeats.js';
import {
  beat,
  endBeat,
  listBeats,
  MAX_STALE_AFTER_MS,
  ownerBeat,
  pruneHeartbeats,
  setWatching,
} from '../../src/db/nodeHeartbeats.js';
import { describeEachEngine, raceTest } from '../support/databases.js';
import { runDocExamples } from '../support/docExamples.js';

const at = (s: number) => new Date(Date.UTC(2026, 6, 14, 10, 0, s));

describeEachEngine('node heartbeats', (getDb, engine) => {
  it('a beat records the boot once and moves beat_at on every later beat', async () => {
    const { db } = getDb();
    expect(await ownerBeat(db, { owner: 'a@1' })).toEqual({
      beatAt: null,
      replaced: false,
      staleAfterMs: null,
    });
    await beat(db, { owner: 'a@1', nodeId: 'a', now: at(0) });
    await beat(db, { owner: 'a@1', nodeId: 'a', now: at(20) });
    expect(await ownerBeat(db, { owner: 'a@1' })).toEqual({
      beatAt: at(20),
      replaced: false,
      staleAfterMs: null,
    });
    const rows = await db.selectFrom('node_heartbeats').selectAll().execute();
    expect(rows).toEqual([
      {
        owner: 'a@1',
        node_id: 'a',
        started_at: at(0),
        beat_at: at(20),
        boot_lock: false,
        watching: true,
        stale_after_ms: null,
      },
    ]);
  });

  it('each beat says how long it vouches for its boot; readers get it back, checked', async () => {
    const { db } = getDb();
    await beat(db, { owner: 'a@1', nodeId: 'a', now: at(0), staleAfterMs: 10_000 });
    await beat(db, { owner: 'b@1', nodeId: 'b', now: at(1) });
    expect((await listBeats(db)).map((b) => [b.owner, b.staleAfterMs])).toEqual([
      ['a@1', 10_000],
      ['b@1', null],
    ]);
    // A later beat with another window (a restart with a new setting keeps no stale promise).
    await beat(db, { owner: 'a@1', nodeId: 'a', now: at(2), staleAfterMs: 60_000 });
    expect((await ownerBeat(db, { owner: 'a@1' })).staleAfterMs).toBe(60_000);
    for (const staleAfterMs of [0, 1.5, MAX_STALE_AFTER_MS + 1]) {
      const e = await beat(db, { owner: 'a@1', nodeId: 'a', now: at(3), staleAfterMs }).catch(
        (x: unknown) => x,
      );
      expect((e as ValidationError).field).toBe('staleAfterMs');
    }
    // Written around the function (by hand, another tool): the column refuses it.
    await expect(
      sql`UPDATE node_heartbeats SET stale_after_ms = 0 WHERE owner = 'a@1'`.execute(db),
    ).rejects.toThrow(/check constraint/);
    expect((await ownerBeat(db, { owner: 'a@1' })).staleAfterMs).toBe(60_000);
  });

  raceTest(engine)(
    'the flag waits for a tick in progress (it is written under the tick lock)',
    async () => {
      const { db, connectAnother } = getDb();
      await beat(db, { owner: 'a@1', nodeId: 'a', now: at(0) });
      const other = await connectAnother();
      let write: Promise<boolean> | undefined;
      let written = false;
      await other.db.transaction().execute(async (tx) => {
        // A tick holding its lock, as rt_tick does for its whole transaction.
        await sql`SELECT pg_advisory_xact_lock(${LOCK_NAMESPACE}, ${ADVISORY_LOCKS.claimSlot})`.execute(
          tx,
        );
        write = setWatching(db, { owner: 'a@1', watching: false }).then((stored) => {
          written = true;
          return stored;
        });
        await new Promise((r) => setTimeout(r, 300));
        expect(written).toBe(false);
      });
      expect(await write).toBe(true);
      const row = await db
        .selectFrom('node_heartbeats')
        .select('watching')
        .where('owner', '=', 'a@1')
        .executeTakeFirstOrThrow();
      expect(row.watching).toBe(false);
    },
  );

  it('a boot says whether its board is watched; its beats keep what it said', async () => {
    const { db } = getDb();
    // No row yet: nothing to set (the first beat writes the default, watched).
    expect(await setWatching(db, { owner: 'a@1', watching: false })).toBe(false);
    await beat(db, { owner: 'a@1', nodeId: 'a', now: at(0) });
    await beat(db, { owner: 'b@1', nodeId: 'b', now: at(0) });
    expect(await setWatching(db, { owner: 'a@1', watching: false })).toBe(true);
    await beat(db, { owner: 'a@1', nodeId: 'a', now: at(20), bootLock: true });
    const flags = async () =>
      (
        await db
          .selectFrom('node_heartbeats')
          .select(['owner', 'watching'])
          .orderBy('owner')
          .execute()
      ).map((r) => [r.owner, r.watching]);
    expect(await flags()).toEqual([
      ['a@1', false],
      ['b@1', true],
    ]);
    expect(await setWatching(db, { owner: 'a@1', watching: true })).toBe(true);
    expect(await flags()).toEqual([
      ['a@1', true],
      ['b@1', true],
    ]);
    await expect(setWatching(db, { owner: 'no-at-sign', watching: true })).rejects.toThrow(
      ValidationError,
    );
  });

  it('each beat says whether the boot holds its boot lock now, and the watch reads it', async () => {
    const { db } = getDb();
    await beat(db, { owner: 'a@1', nodeId: 'a', now: at(0), bootLock: true });
    await beat(db, { owner: 'b@1', nodeId: 'b', now: at(1) });
    expect((await listBeats(db)).map((b) => [b.owner, b.bootLock])).toEqual([
      ['a@1', true],
      ['b@1', false],
    ]);
    // Its lock lost: the next beat says so.
    await beat(db, { owner: 'a@1', nodeId: 'a', now: at(20), bootLock: false });
    expect((await listBeats(db)).map((b) => [b.owner, b.bootLock])).toEqual([
      ['a@1', false],
      ['b@1', false],
    ]);
  });

  it('a later boot of the same node marks the earlier one replaced; other nodes are not', async () => {
    const { db } = getDb();
    await beat(db, { owner: 'a@1', nodeId: 'a', now: at(0) });
    await beat(db, { owner: 'b@1', nodeId: 'b', now: at(1) });
    await beat(db, { owner: 'a@1', nodeId: 'a', now: at(30) });
    await beat(db, { owner: 'a@2', nodeId: 'a', now: at(31) });
    expect(await ownerBeat(db, { owner: 'a@1' })).toEqual({
      beatAt: at(30),
      replaced: true,
      staleAfterMs: null,
    });
    expect(await ownerBeat(db, { owner: 'a@2' })).toEqual({
      beatAt: at(31),
      replaced: false,
      staleAfterMs: null,
    });
    expect(await ownerBeat(db, { owner: 'b@1' })).toEqual({
      beatAt: at(1),
      replaced: false,
      staleAfterMs: null,
    });
  });

  it('a boot that stops on purpose ends its beat', async () => {
    const { db } = getDb();
    await beat(db, { owner: 'a@1', nodeId: 'a', now: at(0) });
    await endBeat(db, { owner: 'a@1' });
    await endBeat(db, { owner: 'a@1' });
    expect(await ownerBeat(db, { owner: 'a@1' })).toEqual({
      beatAt: null,
      replaced: false,
      staleAfterMs: null,
    });
  });

  it('prunes beats older than a moment, and only those', async () => {
    const { db } = getDb();
    await beat(db, { owner: 'a@1', nodeId: 'a', now: at(0) });
    await beat(db, { owner: 'b@1', nodeId: 'b', now: at(10) });
    expect(await pruneHeartbeats(db, { before: at(5) })).toBe(1);
    expect(
      (await db.selectFrom('node_heartbeats').select('owner').execute()).map((r) => r.owner),
    ).toEqual(['b@1']);
  });

  it('rejects a malformed owner or node with a typed error and writes nothing', async () => {
    const { db } = getDb();
    for (const [input, field] of [
      [{ owner: 'no-boot', nodeId: 'a', now: at(0) }, 'owner'],
      [{ owner: 'a@1@2', nodeId: 'a', now: at(0) }, 'owner'],
      [{ owner: 'a@1', nodeId: 'a b', now: at(0) }, 'nodeId'],
      [{ owner: 'a@1', nodeId: 'a', now: new Date(Number.NaN) }, 'now'],
    ] as const) {
      const e = await beat(db, input).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(ValidationError);
      expect((e as ValidationError).field).toBe(field);
    }
    await expect(ownerBeat(db, { owner: '' })).rejects.toBeInstanceOf(ValidationError);
    expect(await db.selectFrom('node_heartbeats').selectAll().execute()).toEqual([]);
  });
});

runDocExamples(new URL('../../src/db/nodeHeartbeats.ts', import.meta.url), nodeHeartbeats);
