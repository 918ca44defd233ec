/**
 * A handle and the finish of its run in one tick (a short job: the run
 * ended before its handle's tick left) write the session row once
 * (src/db/tickInput.ts `foldHandles`): the same outcomes as two writes,
 * one row version fewer.
 */
import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { parseTickReply, tick } from '../../src/db/tick.js';
import { tickPayload } from '../../src/db/tickInput.js';
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

/** One session of ann's, granted: the run whose handle and finish the tests send. */
async function oneRunning(t: ReturnType<typeof ticker>) {
  const [g] = (await t([enqueueOp('ann')], { want: 1 })).granted;
  if (g === undefined) throw new Error('nothing granted');
  return g;
}

describeEachEngine('tick: a handle folded into its finish', (getDb) => {
  it('writes the row once, with the handle, and answers both ops applied', async () => {
    const { db } = getDb();
    const t = ticker(db, { defaultUserCap: 1 });
    const g = await oneRunning(t);
    const h = handleOp(g.session.id, g.session.epoch);
    const f = finishOp(g.session.id, g.session.epoch);
    const { result, updates } = await db.transaction().execute(async (tx) => {
      const before = await sessionUpdates(tx);
      const result = await tick(tx, t.input([h, f]));
      return { result, updates: (await sessionUpdates(tx)) - before };
    });
    expect(updates).toBe(1);
    // One outcome row for the pair: the finish's names the handle, answered with its session.
    expect(result.outcomes.filter((o) => o.ref === h.ref)).toHaveLength(1);
    expect(appliedOf(result, h.ref).session).toBe(appliedOf(result, f.ref).session);
    expect(appliedOf(result, h.ref)).toMatchObject({ task: null, position: null });
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
    const g = await oneRunning(t);
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

  it('a finish found applied while its folded handle does not hold answers the handle stale', async () => {
    const { db } = getDb();
    const t = ticker(db, { defaultUserCap: 1 });
    const g = await oneRunning(t);
    const f = finishOp(g.session.id, g.session.epoch);
    const h0 = handleOp(g.session.id, g.session.epoch);
    const first = await t([h0, f]);
    expect(first.outcomes.map((o) => o.kind)).toEqual(['applied', 'applied']);
    // The finish again (a retried tick) with another handle folded in: the
    // finish is found applied, the handle's compare-and-set does not hold.
    const h = { ...handleOp(g.session.id, g.session.epoch), handle: 'rt-other' };
    const r = await t([h, f]);
    expect(appliedOf(r, f.ref).session.handle).not.toBe('rt-other');
    expect(r.outcomes.find((o) => o.ref === h.ref)).toMatchObject({
      kind: 'stale',
      actual: { status: 'succeeded', epoch: g.session.epoch },
    });
    // The same pair as the first time: both found applied, one outcome row.
    const again = await t([{ ...h0, ref: 'h-again' }, f]);
    // In op order: the handle, then the finish.
    expect(again.outcomes.map((o) => [o.ref, o.kind])).toEqual([
      ['h-again', 'applied'],
      [f.ref, 'applied'],
    ]);
  });

  it('a finish found stale while its folded handle holds answers the handle applied, on its own row', async () => {
    const { db } = getDb();
    const t = ticker(db, { defaultUserCap: 1 });
    const g = await oneRunning(t);
    const h = handleOp(g.session.id, g.session.epoch);
    await t([h]);
    // Failed meanwhile (same epoch), then the run's late pair arrives.
    await t([
      finishOp(g.session.id, g.session.epoch, {
        status: 'failed',
        exitCode: 1,
        reason: 'exit_code',
        column: 'failed',
      }),
    ]);
    const f = finishOp(g.session.id, g.session.epoch);
    const r = await t([{ ...h, ref: 'h-late' }, f]);
    expect(r.outcomes.find((o) => o.ref === f.ref)).toMatchObject({
      kind: 'stale',
      actual: { status: 'failed', epoch: g.session.epoch },
    });
    expect(appliedOf(r, 'h-late').session).toMatchObject({ status: 'failed', handle: h.handle });
  });

  it("an older node's tick (the folded handle among the handles, marked) gets the same outcomes", async () => {
    const { db } = getDb();
    const t = ticker(db, { defaultUserCap: 1 });
    const g = await oneRunning(t);
    const h = handleOp(g.session.id, g.session.epoch);
    const f = finishOp(g.session.id, g.session.epoch);
    const p = tickPayload(t.input([h, f]));
    // What a node before migration 16 sent: the handle kept, marked, no ref on the finish.
    const finish = p.finishes[0] as Record<string, unknown>;
    const old = {
      ...p,
      handles: [
        {
          ord: finish.h_ord,
          ref: finish.h_ref,
          session_id: g.session.id,
          epoch: g.session.epoch,
          backend: finish.h_backend,
          handle: finish.h_handle,
          started_at: finish.h_started_at,
          folded: true,
        },
      ],
      finishes: [{ ...finish, h_ord: undefined, h_ref: undefined }],
    };
    const { rows } = await sql<{
      r: unknown;
    }>`SELECT rt_tick(${JSON.stringify(old)}::jsonb) AS r`.execute(db);
    const r = parseTickReply(rows[0]?.r);
    expect(r.outcomes.map((o) => [o.ref, o.kind]).sort()).toEqual([
      [f.ref, 'applied'],
      [h.ref, 'applied'],
    ]);
    expect(appliedOf(r, h.ref).session).toMatchObject({ status: 'succeeded', handle: h.handle });
    await expectConsistent(db);
  });
});
