import { expect, it } from 'vitest';
import { NotFoundError, StaleStatusError, ValidationError } from '../../src/db/errors.js';
import { newId } from '../../src/db/ids.js';
import { retryTask } from '../../src/db/retryTask.js';
import { listSessionEvents, listSessionsForTask } from '../../src/db/sessionQueries.js';
import { cancel, claim, finish } from '../../src/db/sessionTransitions.js';
import { describeEachEngine, raceTest } from '../support/databases.js';
import { enqueue, rowCounts, steppingClock } from './fixtures.js';

describeEachEngine('retryTask', (getDb, engine) => {
  it('queues attempt 2 of a cancelled task, with its history row', async () => {
    const { db } = getDb();
    const now = steppingClock();
    const { task, session } = await enqueue(db, 'alice', now());
    const gone = await cancel(db, {
      sessionId: session.id,
      expected: { status: 'queued', epoch: 0 },
      reason: 'cancelled by user',
      now: now(),
    });
    const at = now();
    const next = await retryTask(db, {
      taskId: task.id,
      expected: { sessionId: gone.id, status: 'cancelled', epoch: gone.epoch },
      now: at,
    });
    expect(next).toMatchObject({ taskId: task.id, attempt: 2, status: 'queued', epoch: 0 });
    expect(next.enqueuedAt).toEqual(at);
    const events = await listSessionEvents(db, next.id);
    expect(events.map((e) => [e.from, e.to, e.reason])).toEqual([
      [null, 'queued', `retry of ${session.id}`],
    ]);
  });

  it('retries a failure that is not user-recoverable (the user asks, not a give-up)', async () => {
    const { db } = getDb();
    const now = steppingClock();
    const { task, session } = await enqueue(db, 'alice', now());
    await claim(db, { sessionId: session.id, epoch: 0, owner: 'node-a', now: now() });
    await finish(db, {
      sessionId: session.id,
      epoch: 1,
      status: 'failed',
      exitCode: 2,
      reason: 'exit_code',
      userRecoverable: false,
      now: now(),
    });
    const next = await retryTask(db, {
      taskId: task.id,
      expected: { sessionId: session.id, status: 'failed', epoch: 1 },
      now: now(),
    });
    expect(next.attempt).toBe(2);
  });

  it('is a compare-and-set: a stale view (epoch, status, or a superseded attempt) writes nothing', async () => {
    const { db } = getDb();
    const now = steppingClock();
    const { task, session } = await enqueue(db, 'alice', now());
    // Still queued: nothing to retry.
    const live = await retryTask(db, {
      taskId: task.id,
      expected: { sessionId: session.id, status: 'cancelled', epoch: 0 },
      now: now(),
    }).catch((e: unknown) => e);
    expect(live).toBeInstanceOf(StaleStatusError);
    await cancel(db, {
      sessionId: session.id,
      expected: { status: 'queued', epoch: 0 },
      reason: 'cancelled by user',
      now: now(),
    });
    const before = await rowCounts(db);
    const wrongEpoch = await retryTask(db, {
      taskId: task.id,
      expected: { sessionId: session.id, status: 'cancelled', epoch: 3 },
      now: now(),
    }).catch((e: unknown) => e);
    expect(wrongEpoch).toMatchObject({ code: 'DB_STALE_STATUS' });
    expect(await rowCounts(db)).toEqual(before);
    const next = await retryTask(db, {
      taskId: task.id,
      expected: { sessionId: session.id, status: 'cancelled', epoch: 0 },
      now: now(),
    });
    // The same view again: attempt 1 is no longer the latest.
    const superseded = await retryTask(db, {
      taskId: task.id,
      expected: { sessionId: session.id, status: 'cancelled', epoch: 0 },
      now: now(),
    }).catch((e: unknown) => e);
    expect(superseded).toBeInstanceOf(StaleStatusError);
    expect((superseded as StaleStatusError).actual.status).toBe(`superseded by ${next.id}`);
    expect((await listSessionsForTask(db, task.id)).map((s) => s.attempt)).toEqual([1, 2]);
  });

  raceTest(engine)(
    'of two racing retries (two connections), exactly one adds an attempt',
    async () => {
      const { db, connectAnother } = getDb();
      const other = (await connectAnother()).db;
      const now = steppingClock();
      const { task, session } = await enqueue(db, 'alice', now());
      await cancel(db, {
        sessionId: session.id,
        expected: { status: 'queued', epoch: 0 },
        reason: 'cancelled by user',
        now: now(),
      });
      const input = {
        taskId: task.id,
        expected: { sessionId: session.id, status: 'cancelled' as const, epoch: 0 },
        now: now(),
      };
      const results = await Promise.allSettled([retryTask(db, input), retryTask(other, input)]);
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      const lost = results.find((r) => r.status === 'rejected');
      expect((lost as PromiseRejectedResult).reason).toBeInstanceOf(StaleStatusError);
      expect((await listSessionsForTask(db, task.id)).map((s) => s.attempt)).toEqual([1, 2]);
    },
  );

  it('an unknown task is NotFoundError; bad input is ValidationError naming the field', async () => {
    const { db } = getDb();
    const now = steppingClock();
    const missing = await retryTask(db, {
      taskId: newId('task'),
      expected: { sessionId: newId('session'), status: 'failed', epoch: 0 },
      now: now(),
    }).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(NotFoundError);
    const bad = await retryTask(db, {
      taskId: newId('task'),
      expected: { sessionId: newId('session'), status: 'succeeded' as 'failed', epoch: 0 },
      now: now(),
    }).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(ValidationError);
    expect((bad as ValidationError).field).toBe('expected.status');
  });
});
