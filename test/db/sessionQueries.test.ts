import { sql } from 'kysely';
import { expect, it } from 'vitest';
import {
  countRunning,
  listQueued,
  listRunning,
  listSessionEvents,
  listSessionEventsForUser,
  sessionStates,
} from '../../src/db/sessionQueries.js';
import { claim } from '../../src/db/sessionTransitions.js';
import { describeEachEngine } from '../support/databases.js';
import { enqueue, steppingClock } from './fixtures.js';

describeEachEngine('session queries', (getDb) => {
  it('lists queued sessions in submission order, ties on the clock broken by id', async () => {
    const { db } = getDb();
    const same = new Date('2026-07-14T10:00:00Z');
    const earlier = new Date('2026-07-14T09:00:00Z');
    const ids: string[] = [];
    for (let n = 0; n < 5; n++) ids.push((await enqueue(db, `u${n}`, same)).session.id);
    const first = (await enqueue(db, 'u9', earlier)).session.id;
    const expected = [first, ...[...ids].sort()];
    const queued = await listQueued(db);
    expect(queued.map((s) => s.id)).toEqual(expected);

    const page1 = await listQueued(db, { limit: 2 });
    const last = page1.at(-1)!;
    const page2 = await listQueued(db, { after: { enqueuedAt: last.enqueuedAt, id: last.id } });
    expect([...page1, ...page2].map((s) => s.id)).toEqual(expected);
  });

  it('reads the epochs and statuses of the sessions asked for that have rows, and refuses an id that is not one', async () => {
    const { db } = getDb();
    const now = new Date('2026-07-14T10:00:00Z');
    const a = (await enqueue(db, 'u1', now)).session.id;
    const b = (await enqueue(db, 'u2', now)).session.id;
    await claim(db, { sessionId: a, epoch: 0, owner: 'node-a', now });
    const missing = 'ses_00000000000000000000000000000000';
    expect(await sessionStates(db, [a, b, missing])).toEqual(
      new Map([
        [a, { epoch: 1, status: 'running' }],
        [b, { epoch: 0, status: 'queued' }],
      ]),
    );
    expect(await sessionStates(db, [])).toEqual(new Map());
    await expect(sessionStates(db, ["x'; DROP TABLE sessions; --"])).rejects.toMatchObject({
      code: 'DB_VALIDATION',
    });
  });

  it('lists running sessions: all, by owner, by user', async () => {
    const { db } = getDb();
    const now = steppingClock();
    const claimAs = async (user: string, owner: string) => {
      const { session } = await enqueue(db, user, now());
      return claim(db, { sessionId: session.id, epoch: 0, owner, now: now() });
    };
    const a = await claimAs('alice', 'node-a');
    const b = await claimAs('bob', 'node-a');
    const c = await claimAs('alice', 'node-b');
    await enqueue(db, 'alice', now());
    expect((await listRunning(db)).map((s) => s.id)).toEqual([a.id, b.id, c.id]);
    expect((await listRunning(db, { owner: 'node-a' })).map((s) => s.id)).toEqual([a.id, b.id]);
    expect((await listRunning(db, { userId: 'alice' })).map((s) => s.id)).toEqual([a.id, c.id]);
    expect((await listRunning(db, { userId: 'alice', owner: 'node-b' })).map((s) => s.id)).toEqual([
      c.id,
    ]);
    const counts = await countRunning(db);
    expect(counts.total).toBe(3);
    expect(Object.fromEntries(counts.byUser)).toEqual({ alice: 2, bob: 1 });
  });

  it('lists runs claimed at one instant in the order their ticks granted them, not by random id', async () => {
    const { db } = getDb();
    const now = new Date('2026-07-14T10:00:00Z');
    const ids: string[] = [];
    for (const user of ['u1', 'u2', 'u3', 'u4']) {
      const { session } = await enqueue(db, user, now);
      await claim(db, { sessionId: session.id, epoch: 0, owner: 'node-a', now });
      ids.push(session.id);
    }
    // Grant order: a later tick last; within a tick, by (turn, join_seq).
    // Ids sorted the other way round, so an order by id cannot pass.
    const bySeq = [...ids].sort().reverse();
    const grants: Array<[tick: number, turn: number, join: number]> = [
      [7, 0, 1],
      [7, 0, 2],
      [7, 1, 1],
      [8, 0, 1],
    ];
    for (const [i, id] of bySeq.entries()) {
      const [tick, turn, join] = grants[i] ?? [0, 0, 0];
      await sql`UPDATE sessions SET claimed_tick = ${tick}, turn = ${turn}, join_seq = ${join} WHERE id = ${id}`.execute(
        db,
      );
    }
    expect((await listRunning(db)).map((s) => s.id)).toEqual(bySeq);
  });

  it("shows a session's history only to its user", async () => {
    const { db } = getDb();
    const { session } = await enqueue(db, 'alice', new Date('2026-07-14T10:00:00Z'));
    expect(await listSessionEventsForUser(db, 'alice', session.id)).toEqual(
      await listSessionEvents(db, session.id),
    );
    expect(await listSessionEventsForUser(db, 'bob', session.id)).toEqual([]);
  });

  it('serves the hot queries from the partial indexes', async () => {
    const { db } = getDb();
    // Enough rows, analysed, that the planner's choice reflects the indexes.
    await sql`INSERT INTO tasks
      SELECT 'tsk_' || md5(g::text), 'u' || (g % 50), 't', '{"image":"a","command":["x"]}',
             'backlog', now(), now()
      FROM generate_series(1, 3000) g`.execute(db);
    await sql`INSERT INTO sessions
        (id, task_id, user_id, kind, status, attempt, enqueued_at, owner_node, epoch, updated_at)
      SELECT 'ses_' || md5(g::text), 'tsk_' || md5(g::text), 'u' || (g % 50), 'run',
             CASE WHEN g % 10 = 0 THEN 'running' ELSE 'queued' END, 1, now(),
             CASE WHEN g % 10 = 0 THEN 'node-' || (g % 7) END, 0, now()
      FROM generate_series(1, 3000) g`.execute(db);
    await sql`ANALYZE sessions`.execute(db);
    const plan = async (query: string) => {
      const { rows } = await sql.raw<{ 'QUERY PLAN': string }>(`EXPLAIN ${query}`).execute(db);
      return rows.map((r) => r['QUERY PLAN']).join('\n');
    };
    expect(
      await plan(
        `SELECT * FROM sessions WHERE status = 'queued' ORDER BY enqueued_at, id LIMIT 10`,
      ),
    ).toContain('sessions_queued_dispatch_idx');
    // The head of one user's line, as readLineStatus's lateral reads it.
    expect(
      await plan(
        `SELECT * FROM sessions WHERE user_id = 'u10' AND status = 'queued' AND turn IS NOT NULL ORDER BY turn LIMIT 5`,
      ),
    ).toContain('sessions_queued_line_idx');
    expect(
      await plan(`SELECT * FROM sessions WHERE status = 'running' AND owner_node = 'node-1'`),
    ).toContain('sessions_running_owner_idx');
    expect(
      await plan(`SELECT * FROM sessions WHERE status = 'running' AND user_id = 'u10'`),
    ).toContain('sessions_running_user_idx');
  });
});
