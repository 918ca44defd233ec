/**
 * The scenarios of issue 7, on the public harness: deploys, reschedules and
 * image rolls against a whole runtime, in virtual time, on both engines
 * (PGlite, and the Postgres server when ROUNDTABLE_TEST_DATABASE_URL names one).
 */
import { afterEach, expect, test } from 'vitest';
import {
  createTestRuntime,
  type TestRuntime,
  type TestRuntimeOptions,
} from '../../src/testing/index.js';
import { describeEachEngine } from '../support/databases.js';

let h: TestRuntime | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const agent = (seconds: number, title = 'agent') => ({
  title,
  image: 'runner:v1',
  command: ['agent', String(seconds)],
});
const POLL = 5_000;

describeEachEngine('runtime scenarios', (getDb) => {
  const open = (options: TestRuntimeOptions = {}) =>
    createTestRuntime({ ...options, db: getDb().db });

  test('the 18-hour card: deploy, reschedule, adopt -> container_replaced within one poll, re-queued, completes', async () => {
    h = await open({ pollMs: POLL, adoptBudgetMs: 15 * 60_000 });
    const { taskId, sessionId } = await h.runtime.createTask('alice', agent(600));
    await h.advance(60_000);
    await h.deploy();
    h.cluster.reschedule(sessionId);
    const before = h.clock.now();
    await h.runtime.reconcile();
    await h.advance(POLL);
    const first = (await h.sessions()).find((s) => s.id === sessionId);
    expect(first).toMatchObject({
      status: 'failed',
      failureReason: 'container_replaced',
      userRecoverable: true,
    });
    expect(first?.finishedAt?.getTime()).toBeLessThanOrEqual(before + POLL);
    const events = await h.events(sessionId);
    expect(events.map((e) => e.reason)).toContain('adopted');
    const retry = (await h.sessions()).find((s) => s.attempt === 2);
    expect(retry?.taskId).toBe(taskId);
    await h.advance(700_000);
    expect((await h.sessions()).find((s) => s.attempt === 2)?.status).toBe('succeeded');
    expect(h.board().find((c) => c.taskId === taskId)).toMatchObject({
      column: 'done',
      attempt: 2,
    });
    expect(h.errors).toEqual([]);
  });

  test('a run that survives the deploy is adopted and finishes from its marker', async () => {
    h = await open({ pollMs: POLL });
    const { sessionId } = await h.runtime.createTask('alice', agent(120));
    await h.advance(30_000);
    await h.deploy();
    await h.advance(120_000);
    const s = (await h.sessions()).find((r) => r.id === sessionId);
    expect(s).toMatchObject({ status: 'succeeded', exitCode: 0, owner: 'test-node@boot2' });
    expect(h.execLog(sessionId)).toHaveLength(1);
  });

  test('deploy during adoption: the second boot adopts again, fences the first, one exec', async () => {
    h = await open({ pollMs: POLL });
    const { sessionId } = await h.runtime.createTask('alice', agent(300));
    await h.advance(10_000);
    await h.deploy();
    await h.advance(POLL * 2);
    await h.deploy();
    await h.advance(400_000);
    const s = (await h.sessions()).find((r) => r.id === sessionId);
    expect(s?.status).toBe('succeeded');
    expect(s?.owner).toBe('test-node@boot3');
    const adoptions = (await h.events(sessionId)).filter((e) => e.reason === 'adopted');
    expect(adoptions.map((e) => e.node)).toEqual(['test-node@boot2', 'test-node@boot3']);
    expect(h.execLog(sessionId)).toHaveLength(1);
  });

  test('image roll at boot: step 1 recovers re-pinned runs before step 2 could adopt them', async () => {
    h = await open({ pollMs: POLL });
    const a = await h.runtime.createTask('alice', agent(600, 'a'));
    const b = await h.runtime.createTask('bob', agent(600, 'b'));
    await h.advance(20_000);
    await h.deploy({ runnerImage: 'runner:v2' });
    for (const id of [a.sessionId, b.sessionId]) {
      const events = await h.events(id);
      // Never adopted: step 1 failed them first, so step 2 saw nothing running.
      expect(events.map((e) => e.reason)).not.toContain('adopted');
      expect(events.at(-1)).toMatchObject({ to: 'failed', reason: 'container_replaced' });
    }
    await h.advance(700_000);
    const done = (await h.sessions()).filter((s) => s.status === 'succeeded');
    expect(done.map((s) => s.attempt)).toEqual([2, 2]);
  });

  test('deploy while sessions are queued: all picked up again, in order', async () => {
    h = await open({ caps: { maxRunning: 1, defaultUserCap: 1 } });
    const ids: string[] = [];
    for (const user of ['u1', 'u2', 'u3', 'u4']) {
      ids.push((await h.runtime.createTask(user, agent(10, user))).sessionId);
      // Dispatch order is (enqueued_at, id): distinct instants make it creation order.
      await h.advance(1);
    }
    expect(h.board().map((c) => c.queued?.position ?? 0)).toEqual([0, 1, 2, 3]);
    await h.deploy();
    await h.advance(200_000);
    const rows = await h.sessions();
    expect(rows.every((s) => s.status === 'succeeded')).toBe(true);
    const order = [...rows].sort(
      (x, y) => (x.claimedAt?.getTime() ?? 0) - (y.claimedAt?.getTime() ?? 0),
    );
    expect(order.map((s) => s.id)).toEqual(ids);
  });

  test('cancel works while queued and while running', async () => {
    h = await open({ caps: { maxRunning: 1, defaultUserCap: 1 } });
    const running = await h.runtime.createTask('alice', agent(100, 'r'));
    const queued = await h.runtime.createTask('bob', agent(100, 'q'));
    await h.advance(1_000);
    await h.runtime.cancel('bob', queued.taskId);
    await h.runtime.cancel(null, running.taskId);
    await h.advance(1_000);
    const rows = await h.sessions();
    expect(rows.map((s) => s.status)).toEqual(['cancelled', 'cancelled']);
    expect(h.runtime.poolSnapshot().running).toBe(0);
    await expect(h.runtime.cancel('alice', queued.taskId)).rejects.toMatchObject({
      code: 'not_found',
    });
    const retried = await h.runtime.retry('alice', running.taskId);
    await h.advance(200_000);
    expect((await h.sessions()).find((s) => s.id === retried.sessionId)?.status).toBe('succeeded');
  });
});
