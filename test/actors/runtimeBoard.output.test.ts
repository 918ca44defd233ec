/**
 * A run's output outlives the process: finalize stores it whole on the row
 * with the finish, and a fresh boot's board rebuilds the finished cards'
 * last lines from the rows. On both engines.
 */
import { afterEach, expect, test } from 'vitest';
import { getSessionOutput } from '../../src/db/index.js';
import { createTestRuntime, type TestRuntime } from '../../src/testing/index.js';
import { describeEachEngine } from '../support/databases.js';

let h: TestRuntime | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const agent = (seconds: number) => ({
  title: 'agent',
  image: 'runner:v1',
  command: ['agent', String(seconds)],
});

describeEachEngine('run output on the rows', (getDb) => {
  test('stored with the finish, and the card shows it again after a restart', async () => {
    const { db } = getDb();
    h = await createTestRuntime({ db });
    const { taskId, sessionId } = await h.runtime.createTask('alice', agent(30));
    const failing = await h.runtime.createTask('alice', {
      title: 'fails',
      image: 'runner:v1',
      command: ['fail', '3', 'bad'],
    });
    await h.advance(31_000);
    const before = h.board().find((c) => c.taskId === taskId)?.lastOutput;
    expect(before?.at(-1)).toBe('[agent] done');

    const stored = await getSessionOutput(db, { userId: 'alice', sessionId });
    expect(stored).toMatchObject({ truncated: false });
    expect(stored?.text.split('\n').filter((l) => l !== '')).toEqual(before);
    expect(stored?.totalBytes).toBe(Buffer.byteLength(stored?.text ?? ''));
    expect(await getSessionOutput(db, { userId: 'bob', sessionId })).toBeNull();
    expect(await h.runtime.sessionOutput('alice', sessionId)).toEqual(stored);
    expect(
      (await getSessionOutput(db, { userId: 'alice', sessionId: failing.sessionId }))?.text,
    ).toBe('bad\n');

    // A deploy kills every actor: the next boot's board knows only the rows.
    await h.deploy();
    await h.settle();
    expect(h.board().find((c) => c.taskId === taskId)?.lastOutput).toEqual(before);
    expect(h.board().find((c) => c.taskId === failing.taskId)).toMatchObject({
      column: 'failed',
      lastOutput: ['bad'],
    });
    expect(h.errors).toEqual([]);
  });

  test('a give-up reads no output: its session has none stored, the retry has its own', async () => {
    const { db } = getDb();
    h = await createTestRuntime({ db, pollMs: 5_000 });
    const { sessionId } = await h.runtime.createTask('alice', agent(600));
    await h.advance(60_000);
    await h.deploy();
    h.cluster.reschedule(sessionId);
    await h.runtime.reconcile();
    await h.advance(5_000);
    const first = (await h.sessions()).find((s) => s.id === sessionId);
    expect(first).toMatchObject({ status: 'failed', failureReason: 'container_replaced' });
    expect(await getSessionOutput(db, { userId: 'alice', sessionId })).toBeNull();
    await h.advance(700_000);
    const retry = (await h.sessions()).find((s) => s.attempt === 2);
    expect(retry?.status).toBe('succeeded');
    const stored = await getSessionOutput(db, { userId: 'alice', sessionId: retry?.id ?? '' });
    expect(stored?.text.endsWith('[agent] done\n')).toBe(true);
  });
});
