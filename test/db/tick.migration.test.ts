/**
 * Migration 4 on a store that already has work, written by the pre-tick
 * repositories: queued sessions get turns per user in (enqueued_at, id)
 * order, users join in the order of their oldest queued row, the counters
 * come from the rows, and the first tick grants in that round-robin order.
 */
import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { positionsOf, readLines } from '../../src/db/dispatchReads.js';
import { MIGRATIONS, migrate } from '../../src/db/migrations.js';
import { claim } from '../../src/db/sessionTransitions.js';
import { setUserCap } from '../../src/db/userCaps.js';
import { describeEachEngine } from '../support/databases.js';
import { enqueue, steppingClock } from './fixtures.js';
import { enqueueOp, expectConsistent, finishOp, requeueOp, ticker } from './tickFixtures.js';

describeEachEngine('migration 4 backfill', (getDb) => {
  it('places existing queued and running rows, then ticks in their order', async () => {
    const { db } = getDb();
    await sql`DROP SCHEMA public CASCADE`.execute(db);
    await sql`CREATE SCHEMA public`.execute(db);
    await migrate(
      db,
      MIGRATIONS.filter((m) => m.version <= 3),
    );
    const now = steppingClock();
    const b1 = await enqueue(db, 'bob', now());
    const a1 = await enqueue(db, 'alice', now());
    const b2 = await enqueue(db, 'bob', now());
    const c1 = await enqueue(db, 'carol', now());
    const a2 = await enqueue(db, 'alice', now());
    const b3 = await enqueue(db, 'bob', now());
    await claim(db, { sessionId: b1.session.id, epoch: 0, owner: 'old@boot', now: now() });
    await setUserCap(db, { userId: 'erin', maxRunning: 3, now: now() });

    expect(await migrate(db)).toMatchObject({ applied: [4, 5] });

    // bob's oldest queued row is b2 (b1 runs), after alice's a1: alice joins first.
    const { rows } = await sql<{ id: string; turn: string; join_seq: string }>`
      SELECT id, turn, join_seq FROM sessions WHERE status = 'queued' ORDER BY turn, join_seq`.execute(
      db,
    );
    expect(rows.map((r) => [r.id, Number(r.turn), Number(r.join_seq)])).toEqual([
      [a1.session.id, 0, 0],
      [b2.session.id, 0, 1],
      [c1.session.id, 0, 2],
      [a2.session.id, 1, 0],
      [b3.session.id, 1, 1],
    ]);
    const lines = await readLines(db);
    expect(lines.map((l) => [l.userId, l.queued, l.running, l.maxRunning, l.hasOverride])).toEqual([
      ['alice', 2, 0, 2, false],
      ['bob', 2, 1, 2, false],
      ['carol', 1, 0, 2, false],
    ]);
    const erin = await db
      .selectFrom('user_lines')
      .selectAll()
      .where('user_id', '=', 'erin')
      .executeTakeFirst();
    expect(erin).toMatchObject({ max_running: 3, has_override: true, queued: 0 });
    const state = await db.selectFrom('dispatch_state').selectAll().executeTakeFirstOrThrow();
    expect(state).toMatchObject({ running: 1, global_cap: 20, default_user_cap: 2 });
    expect(Number(state.next_join_seq)).toBe(3);
    await expectConsistent(db);
    const pos = await positionsOf(db, [b1.session.id, a2.session.id, b3.session.id]);
    expect([...pos.values()]).toEqual([0, 4, 5]);

    // bob runs one already, at his cap of 1: passed over, keeping his place.
    const t = ticker(db, { defaultUserCap: 1 });
    const r = await t([], { want: 5 });
    expect(r.granted.map((g) => g.session.id)).toEqual([a1.session.id, c1.session.id]);
    await expectConsistent(db);
  });
});

describeEachEngine('migration 5 (lean hot path)', (getDb) => {
  it('upgrades a store with work in flight and keeps ticking it', async () => {
    const { db } = getDb();
    await sql`DROP SCHEMA public CASCADE`.execute(db);
    await sql`CREATE SCHEMA public`.execute(db);
    await migrate(
      db,
      MIGRATIONS.filter((m) => m.version <= 4),
    );
    const t = ticker(db, { defaultUserCap: 1 });
    const ops = [enqueueOp('alice', 'a1'), enqueueOp('alice', 'a2'), enqueueOp('bob', 'b1')];
    const before = await t(ops, { want: 2 });
    expect(before.granted.map((g) => g.task.title)).toEqual(['a1', 'b1']);

    expect(await migrate(db)).toMatchObject({ applied: [5] });
    const { rows: fks } = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM pg_constraint
      WHERE contype = 'f' AND connamespace = 'public'::regnamespace`.execute(db);
    expect(fks[0]?.n).toBe(0);

    // One finish with output, one requeued at the head of bob's line.
    const [a1, b1] = before.granted.map((g) => g.session);
    const f = finishOp(a1!.id, a1!.epoch);
    const q = requeueOp(b1!.id, b1!.epoch);
    const after = await t([f, q], { want: 5 });
    expect(after.outcomes).toMatchObject([
      { ref: f.ref, kind: 'applied', task: { column: 'done' } },
      { ref: q.ref, kind: 'applied', next: { position: 0 } },
    ]);
    expect(after.granted.map((g) => g.task.title)).toEqual(['a2', 'b1']);
    await expectConsistent(db);
  });
});
