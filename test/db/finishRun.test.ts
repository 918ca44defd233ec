import { expect, it } from 'vitest';
import { StaleStatusError } from '../../src/db/errors.js';
import { finishRun } from '../../src/db/finishRun.js';
import { getSessionOutput } from '../../src/db/sessionOutputs.js';
import { getSession, listSessionEvents } from '../../src/db/sessionQueries.js';
import { adopt, claim } from '../../src/db/sessionTransitions.js';
import { getTask } from '../../src/db/tasks.js';
import { describeEachEngine } from '../support/databases.js';
import { enqueue, rowCounts, steppingClock } from './fixtures.js';

describeEachEngine('finishRun', (getDb) => {
  it('finishes, records history and output, and moves the card, in one write', async () => {
    const { db } = getDb();
    const now = steppingClock();
    const { task, session } = await enqueue(db, 'alice', now());
    await claim(db, { sessionId: session.id, epoch: 0, owner: 'node-a', now: now() });
    const at = now();
    const out = await finishRun(
      db,
      {
        sessionId: session.id,
        epoch: 1,
        status: 'failed',
        exitCode: 3,
        reason: 'exit_code',
        userRecoverable: false,
        now: at,
      },
      { text: 'bad\n', totalBytes: 4, truncated: false },
      'failed',
    );
    expect(out.session).toEqual(await getSession(db, session.id));
    expect(out.task).toEqual(await getTask(db, task.id));
    expect(out.session).toMatchObject({
      status: 'failed',
      exitCode: 3,
      failureReason: 'exit_code',
      finishedAt: at,
    });
    expect(out.task).toMatchObject({ column: 'failed', updatedAt: at });
    const events = await listSessionEvents(db, session.id);
    expect(events.at(-1)).toMatchObject({
      from: 'running',
      to: 'failed',
      reason: 'exit_code',
      node: 'node-a',
      epoch: 1,
      at,
    });
    expect((await getSessionOutput(db, { userId: 'alice', sessionId: session.id }))?.text).toBe(
      'bad\n',
    );
  });

  it('writes nothing when the row moved on (a deposed owner finishing late)', async () => {
    const { db } = getDb();
    const now = steppingClock();
    const { session } = await enqueue(db, 'bob', now());
    await claim(db, { sessionId: session.id, epoch: 0, owner: 'node-a', now: now() });
    await adopt(db, { sessionId: session.id, epoch: 1, owner: 'node-b', now: now() });
    const before = await rowCounts(db);
    const error = await finishRun(
      db,
      { sessionId: session.id, epoch: 1, status: 'succeeded', exitCode: 0, now: now() },
      { text: 'late\n', totalBytes: 5, truncated: false },
      'done',
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StaleStatusError);
    expect(await rowCounts(db)).toEqual(before);
    expect((await getSession(db, session.id)).status).toBe('running');
  });
});
