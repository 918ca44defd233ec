/**
 * Submitting with a key (`CreateTaskInput.key`), with two runtimes on one
 * database and one virtual clock, as replicas behind a load balancer: a
 * caller whose answer was lost asks again, maybe through another node, and
 * gets the same task, never a second run; the same key with another request
 * is a conflict; a key is free again once retention pruned its task.
 */
import { expect, test } from 'vitest';
import { RuntimeCommandError } from '../../src/actors/runtimeTypes.js';
import { createTestRuntime } from '../../src/testing/index.js';
import { describeEachEngine } from '../support/databases.js';
import { advanceAll, bootBeside, nodesOfEachTest, settleAll } from '../support/multiNode.js';

const nodes = nodesOfEachTest();

const MINUTE = 60_000;
const RETENTION = 10 * MINUTE;
const agent = (seconds: number, key?: string) => ({
  title: 'work',
  image: 'runner:v1',
  command: ['agent', String(seconds)],
  ...(key === undefined ? {} : { key }),
});

describeEachEngine('runtime: submission keys', (getDb) => {
  const twoNodes = async () => {
    nodes.h = await createTestRuntime({
      db: getDb().db,
      nodeId: 'nodeA',
      reconcileMs: MINUTE,
      retentionMs: RETENTION,
      caps: { maxRunning: 1, defaultUserCap: 1 },
    });
    const { runtime: b, errors } = await bootBeside(nodes, nodes.h, {
      db: getDb().db,
      caps: { maxRunning: 1, defaultUserCap: 1 },
      reconcileMs: MINUTE,
      retentionMs: RETENTION,
      nodeId: 'nodeB',
      bootId: 'b1',
    });
    return { h: nodes.h, a: nodes.h.runtime, b, errors };
  };

  test('the same key through either node, at once or later, is one task and one run', async () => {
    const { h, a, b, errors } = await twoNodes();
    // A queue ahead of it, so the keyed task waits in line.
    await a.createTask('ann', agent(60));
    const answers = await Promise.all([
      a.submit('ann', agent(5, 'job-1')),
      b.submit('ann', agent(5, 'job-1')),
      a.submit('ann', agent(5, 'job-1')),
    ]);
    expect(new Set(answers.map((x) => x.task.id)).size).toBe(1);
    expect(answers.filter((x) => !x.replayed).length).toBe(1);
    for (const x of answers)
      expect(x).toMatchObject({ position: 1, session: { status: 'queued' } });
    const taskId = answers[0]!.task.id;
    await settleAll([a, b]);
    for (const node of [a, b]) {
      expect(node.cards('ann').filter((c) => c.taskId === taskId).length).toBe(1);
      expect(node.cards('ann').length).toBe(2);
    }

    // Run and finished: asked again later, the same task and its finished attempt.
    await advanceAll(h, [a, b], 2 * MINUTE);
    const later = await b.createTask('ann', agent(5, 'job-1'));
    expect(later).toMatchObject({ taskId, replayed: true, position: 0 });
    const detail = await a.taskDetail(null, taskId);
    expect(detail?.attempts.map((s) => s.status)).toEqual(['succeeded']);
    expect(detail?.submitKey).toBe('job-1');
    expect((await h.tasks()).length).toBe(2);
    // /metrics of the two nodes together: two tasks queued, three answers replayed.
    const counts = [a.metrics().submissionsTotal ?? {}, b.metrics().submissionsTotal ?? {}];
    const sum = (outcome: string) => counts.reduce((n, c) => n + (c[outcome] ?? 0), 0);
    expect([sum('queued'), sum('replayed'), sum('conflict')]).toEqual([2, 3, 0]);
    expect(h.errors).toEqual([]);
    expect(errors).toEqual([]);
  });

  test('the same key with another request is a conflict that names the task; a bad key is invalid', async () => {
    const { a, b } = await twoNodes();
    const { taskId } = await a.createTask('bo', agent(5, 'k'));
    const other = b.createTask('bo', { ...agent(5, 'k'), title: 'another title' });
    await expect(other).rejects.toBeInstanceOf(RuntimeCommandError);
    await expect(other).rejects.toMatchObject({
      code: 'conflict',
      message: expect.stringContaining(taskId),
    });
    await expect(a.createTask('bo', agent(5, 'has space'))).rejects.toMatchObject({
      code: 'invalid',
    });
    // Keys are per user: another user's "k" is a task of its own.
    expect((await b.createTask('cy', agent(5, 'k'))).replayed).toBe(false);
  });

  test('once retention pruned its task, a key names a new one', async () => {
    const { h, a, b } = await twoNodes();
    const first = await a.createTask('di', agent(1, 'nightly'));
    await advanceAll(h, [a, b], RETENTION + 3 * MINUTE);
    expect(await h.tasks()).toEqual([]);
    const again = await b.createTask('di', agent(1, 'nightly'));
    expect(again.replayed).toBe(false);
    expect(again.taskId).not.toBe(first.taskId);
  });
});
