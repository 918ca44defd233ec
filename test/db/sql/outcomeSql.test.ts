/**
 * `opsBySession` (src/db/sql/outcomeSql.ts): the tick's updates of a set of
 * ops find their rows by key and read each row's op from a map, and the
 * compare-and-set stays on the row. A row another transaction changes while
 * the tick waits for its lock is checked again on its newest version: a
 * change that keeps the fence lets the op apply, a moved fence makes it
 * stale, as with the joined updates before migration 14 (a lookup by ctid
 * failed this: the newest version has another ctid). And a tick of many
 * ops applies every one.
 */
import { sql } from 'kysely';
import { expect, it, vi } from 'vitest';
import type { Session } from '../../../src/db/rows.js';
import type { Db } from '../../../src/db/transaction.js';
import { describeEachEngine, raceTest, truncateAll } from '../../support/databases.js';
import { enqueueOp, expectConsistent, finishOp, handleOp, ticker } from '../tickFixtures.js';

/** Resolves once a backend of this database waits for a row lock (the tick behind `holder`). */
async function someoneWaitsForALock(db: Db): Promise<void> {
  await vi.waitFor(
    async () => {
      const { rows } = await sql<{ n: string }>`SELECT count(*) AS n FROM pg_stat_activity
        WHERE datname = current_database() AND wait_event_type = 'Lock'`.execute(db);
      expect(Number(rows[0]?.n)).toBeGreaterThan(0);
    },
    { timeout: 10_000, interval: 20 },
  );
}

describeEachEngine('tick updates that read their ops from a map', (getDb, engine) => {
  it('a tick of 300 finishes and handles applies every one, fenced', async () => {
    const { db } = getDb();
    await truncateAll(db);
    const t = ticker(db, { globalCap: 600, defaultUserCap: 600 });
    const users = Array.from({ length: 30 }, (_, i) => `u${i}`);
    const granted = (
      await t(
        Array.from({ length: 600 }, (_, i) => enqueueOp(users[i % users.length]!)),
        { want: 600 },
      )
    ).granted.map((g) => g.session);
    expect(granted).toHaveLength(600);
    const [toFinish, toHandle] = [granted.slice(0, 300), granted.slice(300)];
    const stale = finishOp(toFinish[0]!.id, toFinish[0]!.epoch + 1);
    const r = await t([
      ...toFinish.map((s) => finishOp(s.id, s.epoch)),
      ...toHandle.map((s) => handleOp(s.id, s.epoch)),
      stale,
    ]);
    const kinds = new Map(r.outcomes.map((o) => [o.ref, o.kind]));
    expect([...kinds.values()].filter((k) => k === 'applied')).toHaveLength(600);
    expect(kinds.get(stale.ref)).toBe('stale');
    const { rows } = await sql<{ status: string; handled: boolean; n: string }>`
      SELECT status, handle IS NOT NULL AS handled, count(*) AS n FROM sessions
      GROUP BY 1, 2 ORDER BY 1, 2`.execute(db);
    expect(rows.map((x) => [x.status, x.handled, Number(x.n)])).toEqual([
      ['running', true, 300],
      ['succeeded', false, 300],
    ]);
    await expectConsistent(db);
  });

  raceTest(engine)(
    'a row changed while the tick waits is checked again on its newest version',
    async () => {
      const { db, connectAnother } = getDb();
      await truncateAll(db);
      const other = (await connectAnother()).db;
      const t = ticker(other, { defaultUserCap: 5 });
      const [kept, fenced, handled] = (
        await t([enqueueOp('ann'), enqueueOp('ben'), enqueueOp('cat')], { want: 3 })
      ).granted.map((g) => g.session) as [Session, Session, Session];
      const ops = [
        finishOp(kept.id, kept.epoch),
        finishOp(fenced.id, fenced.epoch),
        handleOp(handled.id, handled.epoch),
      ];
      let result: Awaited<ReturnType<typeof t>> | undefined;
      let ticking: Promise<void> = Promise.resolve();
      await db.transaction().execute(async (trx) => {
        // New row versions (new ctids) before the tick reads them: two keep
        // their epoch, one is fenced away (as an adoption would).
        await sql`UPDATE sessions SET updated_at = updated_at + interval '1 second'
          WHERE id IN (${kept.id}, ${handled.id})`.execute(trx);
        await sql`UPDATE sessions SET epoch = epoch + 1 WHERE id = ${fenced.id}`.execute(trx);
        ticking = t(ops).then((r) => {
          result = r;
        });
        await someoneWaitsForALock(db);
        expect(result).toBeUndefined();
      });
      await ticking;
      const kinds = new Map(result!.outcomes.map((o) => [o.ref, o.kind]));
      expect(kinds.get(ops[0]!.ref)).toBe('applied');
      expect(kinds.get(ops[1]!.ref)).toBe('stale');
      expect(kinds.get(ops[2]!.ref)).toBe('applied');
      const { rows } = await sql<{
        id: string;
        status: string;
        epoch: number;
        handle: string | null;
      }>`
        SELECT id, status, epoch, handle FROM sessions ORDER BY id`.execute(db);
      const byId = new Map(rows.map((x) => [x.id, x]));
      expect(byId.get(kept.id)?.status).toBe('succeeded');
      expect(byId.get(fenced.id)).toMatchObject({ status: 'running', epoch: fenced.epoch + 1 });
      expect(byId.get(handled.id)?.handle).not.toBeNull();
    },
    60_000,
  );
});
