/**
 * The Reconciler's steps on a real store and simulated cluster, driven one
 * by one, and the proof that their order is a contract.
 */
import { describe, expect, test } from 'vitest';
import type { TestRuntime } from '../../src/testing/index.js';
import { pgliteRuntimes } from '../support/pgliteRuntimes.js';

const runtimes = pgliteRuntimes();
let h: TestRuntime;

const agent = (seconds: number) => ({
  title: 't',
  image: 'runner:v1',
  command: ['agent', String(seconds)],
});

describe('Reconciler', () => {
  test('order: step 1 fails re-pinned runs before step 2 looks; in the other order they are adopted', async () => {
    // With step 1 (boot, runnerImage): failed at once, never adopted.
    h = await runtimes.open();
    const a = await h.runtime.createTask('alice', agent(600));
    await h.advance(10_000);
    await h.deploy({ runnerImage: 'runner:v2' });
    expect((await h.events(a.sessionId)).map((e) => e.reason)).toEqual([
      'created',
      'claimed',
      'container_replaced',
    ]);
    await h.close();

    // The same roll done outside the sweep (so step 1 cannot see it): step 2
    // adopts, and only the adoption's poll finds the container replaced.
    h = await runtimes.open({ pollMs: 5_000 });
    const b = await h.runtime.createTask('alice', agent(600));
    await h.advance(10_000);
    h.cluster.rollImage('runner:v2');
    await h.deploy();
    await h.advance(5_000);
    expect((await h.events(b.sessionId)).map((e) => e.reason)).toEqual([
      'created',
      'claimed',
      'adopted',
      'container_replaced',
    ]);
  });

  test('after a deploy, the adopted run keeps its slot and queued work waits as a row, then runs', async () => {
    h = await runtimes.open({ caps: { maxRunning: 1, defaultUserCap: 1 } });
    const p = await h.runtime.createTask('u1', agent(30));
    const q = await h.runtime.createTask('u2', agent(30));
    await h.settle();
    h.runtime.kill();
    expect(h.runtime.liveRunners()).toEqual([]);
    await h.deploy();
    // The boot pass adopted u1's run; u2 has no runner: waiting is a row, not a process.
    expect(h.runtime.liveRunners()).toEqual([p.sessionId]);
    expect(h.board().find((c) => c.sessionId === q.sessionId)?.queued?.position).toBe(1);
    await h.advance(35_000);
    expect(h.runtime.liveRunners()).toEqual([q.sessionId]);
    await h.advance(35_000);
    expect((await h.sessions()).map((s) => s.status)).toEqual(['succeeded', 'succeeded']);
  });

  test('stale handles: a service no running session owns is removed by the sweep', async () => {
    h = await runtimes.open();
    const { taskId, sessionId } = await h.runtime.createTask('alice', agent(600));
    await h.advance(1_000);
    expect(h.cluster.serviceOf(sessionId)).toBeDefined();
    h.runtime.kill();
    await h.deploy();
    await h.runtime.cancel(null, taskId);
    await h.runtime.reconcile();
    await h.settle();
    expect(h.cluster.serviceOf(sessionId)).toBeUndefined();
  });

  test('an orphan with no handle and no run under its name is failed and re-queued (owner_lost)', async () => {
    h = await runtimes.open({ pollMs: 5_000 });
    const { sessionId } = await h.runtime.createTask('alice', agent(600));
    await h.advance(1_000);
    // Simulate an owner that died between claim and start: no handle, no service.
    // (One that died after start is adopted by name: test/actors/unrecordedRun.test.ts.)
    await runtimes.pglite.query(
      `UPDATE sessions SET handle = NULL, owner_node = 'gone@boot0' WHERE id = $1`,
      [sessionId],
    );
    await h.cluster.api.removeService(`rt-${sessionId}`);
    await h.deploy();
    const events = await h.events(sessionId);
    expect(events.at(-1)).toMatchObject({ to: 'failed', reason: 'owner_lost' });
    expect((await h.sessions()).filter((s) => s.attempt === 2)).toHaveLength(1);
  });
});
