/**
 * The board's reads on both engines: one card's rows, every card with the
 * attempt before the latest, and output tails (whole or cut).
 */
import { expect, it } from 'vitest';
import * as rows from '../../src/actors/runtimeBoardRows.js';
import { createTaskWithSession, newId } from '../../src/db/index.js';
import { describeEachEngine } from '../support/databases.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/actors/runtimeBoardRows.ts', import.meta.url), rows);

describeEachEngine('the board rows', (getDb) => {
  it('reads one card, every card, and the tails of stored outputs', async () => {
    const { db } = getDb();
    const now = new Date(Date.UTC(2026, 0, 1));
    const one = await createTaskWithSession(db, {
      userId: 'alice',
      title: 'one',
      spec: { image: 'i', command: ['c'] },
      now,
    });
    const two = await createTaskWithSession(db, {
      userId: 'bob',
      title: 'two',
      spec: { image: 'i', command: ['c'] },
      now,
    });
    // A second attempt of `two`, its first failed.
    await db
      .updateTable('sessions')
      .set({ status: 'failed', failure_reason: 'timeout' })
      .where('id', '=', two.session.id)
      .execute();
    const second = newId('session');
    await db
      .insertInto('sessions')
      .values({
        id: second,
        task_id: two.task.id,
        user_id: 'bob',
        attempt: 2,
        status: 'queued',
        kind: 'run',
        enqueued_at: now,
        updated_at: now,
      })
      .execute();

    expect(await rows.readCardRows(db, one.task.id)).toMatchObject({
      task: { id: one.task.id, title: 'one' },
      session: { id: one.session.id, attempt: 1 },
    });
    expect((await rows.readCardRows(db, two.task.id))?.session.id).toBe(second);
    expect(await rows.readCardRows(db, newId('task'))).toBeUndefined();

    const all = await rows.readAllCardRows(db);
    expect(all.tasks.map((t) => t.id).sort()).toEqual([one.task.id, two.task.id].sort());
    expect(all.latest.get(two.task.id)?.id).toBe(second);
    expect(all.latest.get(one.task.id)?.id).toBe(one.session.id);
    expect(all.previous).toEqual(new Map([[two.task.id, { attempt: 1, reason: 'timeout' }]]));

    const stored = { created_at: now, truncated: false, total_bytes: 0 };
    const long = 'x'.repeat(rows.RESTORE_TAIL_CHARS + 10);
    await db
      .insertInto('session_outputs')
      .values([
        { session_id: one.session.id, text: 'a\nb\n', ...stored },
        { session_id: two.session.id, text: long, ...stored },
      ])
      .execute();
    const tails = await rows.readOutputTails(db, [one.session.id, two.session.id, second]);
    expect(tails.sort((a, b) => (a.sessionId < b.sessionId ? -1 : 1))).toEqual(
      [
        { sessionId: one.session.id, tail: 'a\nb\n', whole: true },
        { sessionId: two.session.id, tail: long.slice(-rows.RESTORE_TAIL_CHARS), whole: false },
      ].sort((a, b) => (a.sessionId < b.sessionId ? -1 : 1)),
    );
  });

  it('reads only the cards a board keeps when older work is past retention', async () => {
    const { db } = getDb();
    const day = (d: number) => new Date(Date.UTC(2026, 0, d));
    const spec = { image: 'i', command: ['c'] };
    const task = (title: string, created: number) =>
      createTaskWithSession(db, { userId: 'alice', title, spec, now: day(created) });
    const end = (sessionId: string, status: 'succeeded' | 'cancelled', d: number | null) =>
      db
        .updateTable('sessions')
        .set({ status, finished_at: d === null ? null : day(d), updated_at: day(d ?? 2) })
        .where('id', '=', sessionId)
        .execute();
    const old = await task('ended long ago', 1);
    await end(old.session.id, 'succeeded', 2);
    const legacy = await task('a final row without finished_at', 1);
    await end(legacy.session.id, 'cancelled', null);
    const lateEnd = await task('created long ago, ended lately', 1);
    await end(lateEnd.session.id, 'succeeded', 20);
    const waiting = await task('still queued', 1);
    const fresh = await task('created lately', 20);
    await end(fresh.session.id, 'succeeded', 21);

    const kept = [lateEnd, waiting, fresh].map((t) => t.task.id).sort();
    const all = await rows.readAllCardRows(db, day(10).getTime());
    expect(all.tasks.map((t) => t.id).sort()).toEqual(kept);
    expect([...all.latest.keys()].sort()).toEqual(kept);
    expect((await rows.readAllCardRows(db)).tasks).toHaveLength(5);
  });

  it('reads the tails of more stored outputs than a statement takes parameters', async () => {
    const { db } = getDb();
    const now = new Date(Date.UTC(2026, 0, 1));
    const { session } = await createTaskWithSession(db, {
      userId: 'alice',
      title: 'one',
      spec: { image: 'i', command: ['c'] },
      now,
    });
    await db
      .insertInto('session_outputs')
      .values({
        session_id: session.id,
        text: 'done\n',
        created_at: now,
        truncated: false,
        total_bytes: 5,
      })
      .execute();
    // A boot over 70,000 finished cards asked for them in one statement, and failed.
    const ids = [...Array.from({ length: 70_000 }, () => newId('session')), session.id];
    expect(await rows.readOutputTails(db, ids)).toEqual([
      { sessionId: session.id, tail: 'done\n', whole: true },
    ]);
  });
});
