import { expect, it } from 'vitest';
import { finishWithOutput } from '../../src/db/sessionOutputs.js';
import { claim } from '../../src/db/sessionTransitions.js';
import { getTaskOutput, getTaskRecord } from '../../src/db/taskDetail.js';
import { createTaskWithSession } from '../../src/db/tasks.js';
import { tick } from '../../src/db/tick.js';
import { describeEachEngine } from '../support/databases.js';
import { enqueue, steppingClock } from './fixtures.js';
import { enqueueOp, finishOp } from './tickFixtures.js';

describeEachEngine('task detail', (getDb) => {
  it('reads a task with its attempts and output for its user and the admin, never another user', async () => {
    const { db } = getDb();
    const now = steppingClock();
    const { task, session } = await createTaskWithSession(db, {
      userId: 'alice',
      title: 'with env',
      spec: {
        image: 'busybox:1.36',
        command: ['sh', '-c', 'echo hi'],
        env: { TOKEN: 'hush', A: '1' },
      },
      now: now(),
    });
    await claim(db, { sessionId: session.id, epoch: 0, owner: 'node-a@boot1', now: now() });
    await finishWithOutput(
      db,
      {
        sessionId: session.id,
        epoch: 1,
        status: 'failed',
        exitCode: 3,
        reason: 'exit_code',
        userRecoverable: false,
        now: now(),
      },
      { text: 'hi\nbye\n', totalBytes: 7, truncated: false },
    );
    const other = await enqueue(db, 'bob', now());

    const mine = await getTaskRecord(db, { actor: 'alice', taskId: task.id });
    expect(mine).toMatchObject({
      taskId: task.id,
      userId: 'alice',
      title: 'with env',
      image: 'busybox:1.36',
      command: ['sh', '-c', 'echo hi'],
      envKeys: ['A', 'TOKEN'],
      attempts: [
        {
          sessionId: session.id,
          attempt: 1,
          status: 'failed',
          exitCode: 3,
          failureReason: 'exit_code',
          node: 'node-a@boot1',
        },
      ],
    });
    expect(mine!.attempts[0]!.events.map((e) => e.to)).toEqual(['queued', 'running', 'failed']);
    expect(JSON.stringify(mine)).not.toContain('hush');
    expect(await getTaskRecord(db, { actor: null, taskId: task.id })).toEqual(mine);
    expect(await getTaskRecord(db, { actor: 'bob', taskId: task.id })).toBeNull();
    expect(await getTaskRecord(db, { actor: 'alice', taskId: other.task.id })).toBeNull();
    expect(await getTaskRecord(db, { actor: 'alice', taskId: 'not-an-id' })).toBeNull();

    const output = { actor: 'alice', taskId: task.id, sessionId: session.id };
    expect((await getTaskOutput(db, output))?.text).toBe('hi\nbye\n');
    expect((await getTaskOutput(db, { ...output, actor: null }))?.text).toBe('hi\nbye\n');
    expect(await getTaskOutput(db, { ...output, actor: 'bob' })).toBeNull();
    // The session must be an attempt of the task named.
    expect(await getTaskOutput(db, { ...output, taskId: other.task.id, actor: null })).toBeNull();
  });

  it('gives a queued attempt its exact place in line, a running one 0, an ended one none', async () => {
    const { db } = getDb();
    const caps = { globalCap: 1, defaultUserCap: 1, now: new Date() };
    const ops = ['ann', 'bo', 'cy'].map((u) => enqueueOp(u));
    // One runner: ann's is granted, bo's and cy's wait in that order.
    const done = await tick(db, { ...caps, owner: 'node-a@boot1', want: 1, ops });
    expect(done.granted.map((g) => g.session.userId)).toEqual(['ann']);
    const place = async (i: number) =>
      (await getTaskRecord(db, { actor: null, taskId: ops[i]!.taskId }))?.attempts[0]?.position;
    expect([await place(0), await place(1), await place(2)]).toEqual([0, 1, 2]);
    const running = done.granted[0]!.session;
    const finish = finishOp(running.id, running.epoch);
    await tick(db, { ...caps, owner: 'node-a@boot1', want: 0, ops: [finish] });
    expect([await place(0), await place(1), await place(2)]).toEqual([null, 1, 2]);
  });
});
