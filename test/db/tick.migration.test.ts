/**
 * Migration 4 on a store that already has work, written by the pre-tick
 * repositories: queued sessions get turns per user in (enqueued_at, id)
 * order, users join in the order of their oldest queued row, the counters
 * come from the rows, and the first tick grants in that round-robin order.
 */
import { sql } from 'kysely';
import { expect, it } from 'vitest';
import {
  currentTick,
  positionsOf,
  readChanges,
  readLines,
  repairDispatch,
} from '../../src/db/dispatchReads.js';
import { MIGRATIONS, migrate } from '../../src/db/migrations.js';
import { listSessionEvents } from '../../src/db/sessionQueries.js';
import { claim } from '../../src/db/sessionTransitions.js';
import { getTaskRecord } from '../../src/db/taskDetail.js';
import type { Db } from '../../src/db/transaction.js';
import { setUserCap } from '../../src/db/userCaps.js';
import { describeEachEngine } from '../support/databases.js';
import { enqueue, steppingClock } from './fixtures.js';
import { expectConsistent, finishOp, ref, requeueOp, ticker } from './tickFixtures.js';

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

    expect(await migrate(db)).toMatchObject({
      applied: [
        4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27,
      ],
    });

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

/**
 * A store at `version` with work in flight, written as the rows of that
 * era's writers would be: the old migrations' functions are the current
 * code's (migrations.ts), so an older tick cannot run here; the pre-tick
 * repositories and the repair write what such a store holds (history rows,
 * turns, counters). alice: a1 running on old@boot, a2 queued; bob: b1
 * running, b2 queued.
 */
async function storeAt(db: Db, version: number) {
  await sql`DROP SCHEMA public CASCADE`.execute(db);
  await sql`CREATE SCHEMA public`.execute(db);
  await migrate(
    db,
    MIGRATIONS.filter((m) => m.version <= version),
  );
  const now = steppingClock();
  const [a1, a2, b1, b2] = [
    await enqueue(db, 'alice', now(), 'a1'),
    await enqueue(db, 'alice', now(), 'a2'),
    await enqueue(db, 'bob', now(), 'b1'),
    await enqueue(db, 'bob', now(), 'b2'),
  ].map((c) => c.session);
  for (const s of [a1, b1])
    await claim(db, { sessionId: s!.id, epoch: 0, owner: 'old@boot', now: now() });
  expect(await repairDispatch(db)).not.toEqual([]);
  return { a1: a1!, a2: a2!, b1: b1!, b2: b2! };
}

describeEachEngine('migration 5 (lean hot path)', (getDb) => {
  it('upgrades a store with work in flight and keeps ticking it', async () => {
    const { db } = getDb();
    const { a1, b1 } = await storeAt(db, 4);
    expect(await migrate(db)).toMatchObject({
      applied: [
        5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27,
      ],
    });
    const { rows: fks } = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM pg_constraint
      WHERE contype = 'f' AND connamespace = 'public'::regnamespace`.execute(db);
    expect(fks[0]?.n).toBe(0);

    // One finish with output, one requeued at the head of bob's line.
    const t = ticker(db, { defaultUserCap: 1 });
    const f = finishOp(a1.id, 1);
    const q = requeueOp(b1.id, 1);
    const after = await t([f, q], { want: 5 });
    expect(after.outcomes).toMatchObject([
      { ref: f.ref, kind: 'applied', task: { column: 'done' } },
      { ref: q.ref, kind: 'applied', next: { position: 0 } },
    ]);
    // b1's next attempt is at the head of bob's line (turn -1), ahead of a2 (turn 0).
    expect(after.granted.map((g) => g.task.title)).toEqual(['b1', 'a2']);
    await expectConsistent(db);
  });
});

describeEachEngine('migration 7 (derived history)', (getDb) => {
  it('keeps the history rows of a store with work in flight, then derives the rest', async () => {
    const { db } = getDb();
    const { a1, a2, b1, b2 } = await storeAt(db, 6);
    const since = await currentTick(db);
    expect(await migrate(db)).toMatchObject({
      applied: [7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27],
    });

    const t = ticker(db, { defaultUserCap: 1 });
    const f = finishOp(a1.id, 1);
    const c = {
      op: 'cancel',
      ref: ref('c'),
      sessionId: b2.id,
      expected: { status: 'queued', epoch: 0 },
      reason: 'cancelled by user',
      column: 'failed',
    } as const;
    const r = await t([f, c], { want: 5 });
    expect(r.granted.map((g) => g.session.id)).toEqual([a2.id]);

    const history = async (id: string) =>
      (await listSessionEvents(db, id)).map((e) => [e.from, e.to, e.reason, e.node, e.epoch]);
    // The rows written before the upgrade, then the tick's, derived from the session row.
    expect(await history(a1.id)).toEqual([
      [null, 'queued', 'created', null, 0],
      ['queued', 'running', 'claimed', 'old@boot', 1],
      ['running', 'succeeded', null, 'old@boot', 1],
    ]);
    expect(await history(a2.id)).toEqual([
      [null, 'queued', 'created', null, 0],
      ['queued', 'running', 'claimed', 'node-a@boot1', 1],
    ]);
    expect(await history(b2.id)).toEqual([
      [null, 'queued', 'created', null, 0],
      ['queued', 'cancelled', 'cancelled by user', 'node-a@boot1', 0],
    ]);
    expect(await history(b1.id)).toHaveLength(2);
    // The job page reads the same history.
    const record = await getTaskRecord(db, { actor: 'alice', taskId: a1.taskId });
    expect(record?.attempts[0]?.events.map((e) => e.to)).toEqual([
      'queued',
      'running',
      'succeeded',
    ]);
    // The feed sees every task the tick touched.
    const changes = await readChanges(db, since);
    expect(changes.sessions.map((x) => x.session.id).sort()).toEqual([a1.id, a2.id, b2.id].sort());
    await expectConsistent(db);
  });
});
