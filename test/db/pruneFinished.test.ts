import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { ValidationError } from '../../src/db/errors.js';
import { newId } from '../../src/db/ids.js';
import { MAX_PRUNE_BATCH, pruneFinished } from '../../src/db/pruneFinished.js';
import { retryTask } from '../../src/db/retryTask.js';
import { finishWithOutput } from '../../src/db/sessionOutputs.js';
import { cancel, claim, finish } from '../../src/db/sessionTransitions.js';
import type { Db } from '../../src/db/transaction.js';
import { describeEachEngine, raceTest } from '../support/databases.js';
import { enqueue, rowCounts } from './fixtures.js';
import { ticker } from './tickFixtures.js';

const T0 = Date.parse('2026-07-14T10:00:00Z');
const at = (minutes: number) => new Date(T0 + minutes * 60_000);

/** A task created at `created` whose one attempt ran and ended at `ended`. */
async function ranAndEnded(db: Db, user: string, created: number, ended: number) {
  const { task, session } = await enqueue(db, user, at(created));
  await claim(db, { sessionId: session.id, epoch: 0, owner: 'node-a', now: at(created) });
  await finish(db, {
    sessionId: session.id,
    epoch: 1,
    status: 'succeeded',
    exitCode: 0,
    now: at(ended),
  });
  return { task, session };
}

const ids = async (db: Db, table: 'tasks' | 'sessions') =>
  (await db.selectFrom(table).select('id').execute()).map((r) => r.id).sort();

describeEachEngine('pruneFinished', (getDb, engine) => {
  it('deletes whole the tasks whose every attempt ended before the cutoff, oldest first', async () => {
    const { db } = getDb();
    const old = await ranAndEnded(db, 'alice', 0, 5);
    const older = await ranAndEnded(db, 'bob', -10, -5);
    const recent = await ranAndEnded(db, 'alice', 1, 100); // created early, ended late
    const queued = await enqueue(db, 'carol', at(0));
    const running = await enqueue(db, 'carol', at(0));
    await claim(db, { sessionId: running.session.id, epoch: 0, owner: 'node-a', now: at(1) });

    expect(await pruneFinished(db, { before: at(50), limit: 1 })).toEqual([older.task.id]);
    expect(await pruneFinished(db, { before: at(50), limit: 100 })).toEqual([old.task.id]);
    expect(await pruneFinished(db, { before: at(50), limit: 100 })).toEqual([]);
    expect(await ids(db, 'tasks')).toEqual(
      [recent.task.id, queued.task.id, running.task.id].sort(),
    );
    // Its history went with it: every event left is of a task that stays.
    const left = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM session_events e JOIN sessions s ON s.id = e.session_id`.execute(
      db,
    );
    expect((await rowCounts(db)).session_events).toBe(left.rows[0]?.n);
    expect((await rowCounts(db)).sessions).toBe(3);
  });

  it('deletes the stored output, and keeps a task with any attempt after the cutoff', async () => {
    const { db } = getDb();
    const { task, session } = await enqueue(db, 'alice', at(0));
    await claim(db, { sessionId: session.id, epoch: 0, owner: 'node-a', now: at(0) });
    await finishWithOutput(
      db,
      { sessionId: session.id, epoch: 1, status: 'succeeded', exitCode: 0, now: at(5) },
      { text: 'hello\n', totalBytes: 6, truncated: false },
    );
    // A second task: its first attempt ended long ago, its retry recently.
    const twice = await enqueue(db, 'bob', at(0));
    const gone = await cancel(db, {
      sessionId: twice.session.id,
      expected: { status: 'queued', epoch: 0 },
      reason: 'cancelled by user',
      now: at(1),
    });
    await retryTask(db, {
      taskId: twice.task.id,
      expected: { sessionId: gone.id, status: 'cancelled', epoch: gone.epoch },
      now: at(60),
    });
    expect(await pruneFinished(db, { before: at(50), limit: 10 })).toEqual([task.id]);
    const outputs = await db.selectFrom('session_outputs').select('session_id').execute();
    expect(outputs).toEqual([]);
    expect(await ids(db, 'tasks')).toEqual([twice.task.id]);
  });

  it('leaves the history append-only for every other writer', async () => {
    const { db } = getDb();
    await ranAndEnded(db, 'alice', 0, 5);
    await expect(sql`DELETE FROM session_events`.execute(db)).rejects.toThrow(/append-only/);
    // The prune's own setting does not outlive its transaction.
    await pruneFinished(db, { before: at(50), limit: 10 });
    await ranAndEnded(db, 'alice', 100, 105);
    await expect(sql`DELETE FROM session_events`.execute(db)).rejects.toThrow(/append-only/);
  });

  it('answers a later retry of a pruned task with not_found, in the tick and outside it', async () => {
    const { db } = getDb();
    const { task, session } = await enqueue(db, 'alice', at(0));
    const gone = await cancel(db, {
      sessionId: session.id,
      expected: { status: 'queued', epoch: 0 },
      reason: 'cancelled by user',
      now: at(1),
    });
    expect(await pruneFinished(db, { before: at(50), limit: 10 })).toEqual([task.id]);
    const expected = { sessionId: gone.id, status: 'cancelled', epoch: gone.epoch } as const;
    const result = await ticker(db)([
      {
        op: 'retry',
        ref: 'r1',
        taskId: task.id,
        actor: null,
        sessionId: newId('session'),
        expected,
      },
    ]);
    expect(result.outcomes).toEqual([expect.objectContaining({ ref: 'r1', kind: 'not_found' })]);
    await expect(retryTask(db, { taskId: task.id, expected, now: at(60) })).rejects.toMatchObject({
      code: 'DB_NOT_FOUND',
    });
  });

  it('refuses a bad input with a typed error', async () => {
    const { db } = getDb();
    for (const [input, field] of [
      [{ before: new Date(Number.NaN), limit: 10 }, 'before'],
      [{ before: at(0), limit: 0 }, 'limit'],
      [{ before: at(0), limit: MAX_PRUNE_BATCH + 1 }, 'limit'],
      [{ before: at(0), limit: 1.5 }, 'limit'],
    ] as const) {
      const err = await pruneFinished(db, input).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(ValidationError);
      expect((err as ValidationError).field).toBe(field);
    }
  });

  raceTest(engine)(
    'a retry racing the prune either queues its attempt (the task stays) or finds the task gone',
    async () => {
      const { db, connectAnother } = getDb();
      const other = await connectAnother();
      try {
        for (let round = 0; round < 20; round++) {
          const { task, session } = await enqueue(db, 'alice', at(round));
          const gone = await cancel(db, {
            sessionId: session.id,
            expected: { status: 'queued', epoch: 0 },
            reason: 'cancelled by user',
            now: at(round),
          });
          const expected = { sessionId: gone.id, status: 'cancelled', epoch: gone.epoch } as const;
          const [pruned, retried] = await Promise.allSettled([
            pruneFinished(db, { before: at(1_000), limit: 10 }),
            retryTask(other.db, { taskId: task.id, expected, now: at(2_000) }),
          ]);
          if (pruned.status === 'rejected') throw pruned.reason;
          const kept = (await ids(db, 'tasks')).includes(task.id);
          if (retried.status === 'fulfilled') {
            // The retry won: its queued attempt keeps the task whole.
            expect(kept).toBe(true);
            expect(pruned.value).not.toContain(task.id);
            const s = await db.selectFrom('sessions').select('id').where('task_id', '=', task.id);
            expect((await s.execute()).length).toBe(2);
          } else {
            expect(retried.reason).toMatchObject({ code: 'DB_NOT_FOUND' });
            expect(kept).toBe(false);
            expect(pruned.value).toContain(task.id);
          }
        }
      } finally {
        await other.close();
      }
    },
  );
});
