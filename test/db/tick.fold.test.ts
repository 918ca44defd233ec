/**
 * A handle and the finish of its run in one tick (a short job: the run
 * ended before its handle's tick left) write the session row once
 * (src/db/tickInput.ts `foldHandles`): the same outcomes as two writes,
 * one row version fewer.
 */
import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { tick } from '../../src/db/tick.js';
import type { Db } from '../../src/db/transaction.js';
import { describeEachEngine } from '../support/databases.js';
import {
  appliedOf,
  enqueueOp,
  expectConsistent,
  finishOp,
  handleOp,
  ticker,
} from './tickFixtures.js';

/** Row versions of `sessions` written so far in this transaction. */
async function sessionUpdates(tx: Db): Promise<number> {
  const { rows } = await sql<{ n: string }>`
    SELECT n_tup_upd AS n FROM pg_stat_xact_user_tables WHERE relname = 'sessions'`.execute(tx);
  return Number(rows[0]?.n ?? 0);
}

describeEachEngine('tick: a handle folded into its finish', (getDb) => {
  it('writes the row once, with the handle, and answers both ops applied', async () => {
    const { db } = getDb();
    const t = ticker(db, { defaultUserCap: 1 });
    const [g] = (await t([enqueueOp('ann')], { want: 1 })).granted;
    if (g === undefined) throw new Error('nothing granted');
    const h = handleOp(g.session.id, g.session.epoch);
    const f = finishOp(g.session.id, g.session.epoch);
    const { result, updates } = await db.transaction().execute(async (tx) => {
      const before = await sessionUpdates(tx);
      const result = await tick(tx, t.input([h, f]));
      return { result, updates: (await sessionUpdates(tx)) - before };
    });
    expect(updates).toBe(1);
    expect(appliedOf(result, h.ref).session).toMatchObject({
      status: 'succeeded',
      backend: 'simulated',
      handle: h.handle,
      startedAt: h.startedAt,
    });
    expect(appliedOf(result, f.ref).session).toMatchObject({
      status: 'succeeded',
      handle: h.handle,
    });
    await expectConsistent(db);
  });

  it('a stale pair stays stale and writes nothing', async () => {
    const { db } = getDb();
    const t = ticker(db, { defaultUserCap: 1 });
    const [g] = (await t([enqueueOp('ann')], { want: 1 })).granted;
    if (g === undefined) throw new Error('nothing granted');
    const h = handleOp(g.session.id, g.session.epoch + 1);
    const f = finishOp(g.session.id, g.session.epoch + 1);
    const r = await t([h, f]);
    expect(r.outcomes.map((o) => o.kind)).toEqual(['stale', 'stale']);
    const row = await db
      .selectFrom('sessions')
      .selectAll()
      .where('id', '=', g.session.id)
      .executeTakeFirst();
    expect(row).toMatchObject({ status: 'running', handle: null });
  });
});
