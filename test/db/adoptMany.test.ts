import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { adoptMany, MAX_ADOPT_BATCH } from '../../src/db/adoptMany.js';
import { ValidationError } from '../../src/db/errors.js';
import { newId } from '../../src/db/ids.js';
import { getSession, listSessionEvents } from '../../src/db/sessionQueries.js';
import { adopt, cancel, claim } from '../../src/db/sessionTransitions.js';
import type { Db } from '../../src/db/transaction.js';
import { describeEachEngine, raceTest } from '../support/databases.js';
import { enqueue, steppingClock } from './fixtures.js';

/** `n` sessions running under `owner` at epoch 1. */
async function running(db: Db, n: number, owner: string, now: () => Date) {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const { session } = await enqueue(db, `u${i % 3}`, now());
    await claim(db, { sessionId: session.id, epoch: 0, owner, now: now() });
    ids.push(session.id);
  }
  return ids;
}

describeEachEngine('adoptMany', (getDb, engine) => {
  it('fences every run still at its epoch in one statement, with one history row each', async () => {
    const { db } = getDb();
    const now = steppingClock();
    const ids = await running(db, 5, 'dead@1', now);
    const at = now();
    const { adopted, stale } = await adoptMany(db, {
      sessions: ids.map((sessionId) => ({ sessionId, epoch: 1 })),
      owner: 'alive@2',
      now: at,
    });
    expect(stale).toEqual([]);
    expect(adopted.map((s) => s.id).sort()).toEqual([...ids].sort());
    for (const s of adopted)
      expect(s).toMatchObject({ status: 'running', epoch: 2, owner: 'alive@2', updatedAt: at });
    for (const id of ids) {
      expect(await getSession(db, id)).toMatchObject({ epoch: 2, owner: 'alive@2' });
      const events = await listSessionEvents(db, id);
      expect(events.at(-1)).toMatchObject({
        from: 'running',
        to: 'running',
        reason: 'adopted',
        node: 'alive@2',
        epoch: 2,
      });
    }
  });

  it('hands back the time limits of the adopted runs that have one, with no read of their own', async () => {
    const { db } = getDb();
    const now = steppingClock();
    const ids = await running(db, 3, 'dead@1', now);
    const [limited] = ids;
    await sql`UPDATE tasks SET time_limit_ms = 60000
      WHERE id = (SELECT task_id FROM sessions WHERE id = ${limited})`.execute(db);
    const { adopted, limits } = await adoptMany(db, {
      sessions: ids.map((sessionId) => ({ sessionId, epoch: 1 })),
      owner: 'alive@2',
      now: now(),
    });
    expect(adopted).toHaveLength(3);
    expect(limits).toEqual(new Map([[limited, 60_000]]));
  });

  it('records the run found by name on a row with no handle, and never overwrites a recorded one', async () => {
    const { db } = getDb();
    const now = steppingClock();
    const [lost, recorded] = (await running(db, 2, 'dead@1', now)) as [string, string];
    const execAt = new Date('2026-07-14T10:44:00Z');
    await db
      .updateTable('sessions')
      .set({ backend: 'docker', handle: `rt-${recorded}`, started_at: execAt })
      .where('id', '=', recorded)
      .execute();
    const containerAt = new Date('2026-07-14T10:43:00Z');
    const found = (id: string) => ({
      backend: 'swarm' as const,
      handle: `rt-${id}-found`,
      startedAt: containerAt,
    });
    const { adopted } = await adoptMany(db, {
      sessions: [
        { sessionId: lost, epoch: 1, found: found(lost) },
        { sessionId: recorded, epoch: 1, found: found(recorded) },
      ],
      owner: 'alive@2',
      now: now(),
    });
    expect(adopted).toHaveLength(2);
    expect(await getSession(db, lost)).toMatchObject({
      epoch: 2,
      backend: 'swarm',
      handle: `rt-${lost}-found`,
      startedAt: containerAt,
    });
    expect(await getSession(db, recorded)).toMatchObject({
      epoch: 2,
      backend: 'docker',
      handle: `rt-${recorded}`,
      startedAt: execAt,
    });
  });

  it('leaves alone, and names as stale, every row that moved on: another adopter, a cancel, a wrong epoch', async () => {
    const { db } = getDb();
    const now = steppingClock();
    const [taken, cancelled, wrong, fine] = (await running(db, 4, 'dead@1', now)) as [
      string,
      string,
      string,
      string,
    ];
    await adopt(db, { sessionId: taken, epoch: 1, owner: 'other@3', now: now() });
    await cancel(db, {
      sessionId: cancelled,
      expected: { status: 'running', epoch: 1 },
      reason: 'cancelled by user',
      now: now(),
    });
    const before = await listSessionEvents(db, taken);
    const { adopted, stale } = await adoptMany(db, {
      sessions: [
        { sessionId: taken, epoch: 1 },
        { sessionId: cancelled, epoch: 1 },
        { sessionId: wrong, epoch: 0 },
        { sessionId: fine, epoch: 1 },
        { sessionId: newId('session'), epoch: 1 },
      ],
      owner: 'alive@2',
      now: now(),
    });
    expect(adopted.map((s) => s.id)).toEqual([fine]);
    expect(stale).toHaveLength(4);
    expect(await getSession(db, taken)).toMatchObject({ epoch: 2, owner: 'other@3' });
    expect(await getSession(db, cancelled)).toMatchObject({ status: 'cancelled' });
    expect(await getSession(db, wrong)).toMatchObject({ epoch: 1, owner: 'dead@1' });
    expect(await listSessionEvents(db, taken)).toEqual(before);
  });

  it('rejects bad input before any SQL, naming the field', async () => {
    const { db } = getDb();
    const id = newId('session');
    const bad = [
      { sessions: [{ sessionId: 'nope', epoch: 1 }], owner: 'a@1', now: new Date() },
      { sessions: [{ sessionId: id, epoch: -1 }], owner: 'a@1', now: new Date() },
      { sessions: [{ sessionId: id, epoch: 1 }], owner: 'a b', now: new Date() },
      {
        sessions: [
          { sessionId: id, epoch: 1 },
          { sessionId: id, epoch: 2 },
        ],
        owner: 'a@1',
        now: new Date(),
      },
      {
        sessions: Array.from({ length: MAX_ADOPT_BATCH + 1 }, () => ({
          sessionId: newId('session'),
          epoch: 1,
        })),
        owner: 'a@1',
        now: new Date(),
      },
    ];
    for (const input of bad) await expect(adoptMany(db, input)).rejects.toThrow(ValidationError);
    expect(await adoptMany(db, { sessions: [], owner: 'a@1', now: new Date() })).toEqual({
      adopted: [],
      stale: [],
      limits: new Map(),
    });
  });

  raceTest(engine)(
    'two boots fencing the same runs at once: each run goes to exactly one of them',
    async () => {
      const { db, connectAnother } = getDb();
      const now = steppingClock();
      const ids = await running(db, 60, 'dead@1', now);
      const other = await connectAnother();
      try {
        const sessions = ids.map((sessionId) => ({ sessionId, epoch: 1 }));
        // Opposite input orders: both statements lock in id order all the same.
        const [a, b] = await Promise.all([
          adoptMany(db, { sessions, owner: 'a@2', now: now() }),
          adoptMany(other.db, { sessions: [...sessions].reverse(), owner: 'b@2', now: now() }),
        ]);
        expect(a.adopted.length + b.adopted.length).toBe(ids.length);
        expect(new Set([...a.adopted, ...b.adopted].map((s) => s.id)).size).toBe(ids.length);
        for (const id of ids) {
          const events = await listSessionEvents(db, id);
          expect(events.filter((e) => e.reason === 'adopted')).toHaveLength(1);
        }
      } finally {
        await other.close();
      }
    },
  );
});
