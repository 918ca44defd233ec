/**
 * The harness's other nodes (`h.addNode`): replicas on its store, cluster
 * and clock that `advance` and `settle` wait on and `close` kills. A rolling
 * deploy of two nodes, written with the public API only, keeps every cap
 * and runs every job once; a replica killed mid-run loses nothing.
 */
import { expect, it } from 'vitest';
import {
  createTestRuntime,
  HarnessArgumentError,
  HarnessClosedError,
  type TestRuntime,
} from '../../src/testing/index.js';

const agent = (seconds: number) => ({
  title: 'agent',
  image: 'runner:v1',
  command: ['agent', String(seconds)],
});

/** The most sessions running at once per user and in all, as the rows say after each step. */
async function runningNow(h: TestRuntime) {
  const running = (await h.sessions()).filter((s) => s.status === 'running');
  const perUser = new Map<string, number>();
  for (const s of running) perUser.set(s.userId, (perUser.get(s.userId) ?? 0) + 1);
  return { all: running.length, maxPerUser: Math.max(0, ...perUser.values()) };
}

it('a node added to the harness takes grants, and advance settles it with no loop of the test', async () => {
  const h = await createTestRuntime({ caps: { maxRunning: 4, defaultUserCap: 2 } });
  try {
    const b = await h.addNode({ nodeId: 'node-b' });
    expect(h.nodes).toEqual([b]);
    const { task } = await b.submit('alice', agent(30));
    await h.advance(1_000);
    const row = (await h.sessions()).find((s) => s.taskId === task.id);
    expect(row?.status).toBe('running');
    await h.advance(30_000);
    expect((await h.sessions()).find((s) => s.taskId === task.id)?.status).toBe('succeeded');
    // Both boards show it: the harness's node learned of it from the rows.
    expect(h.board().find((c) => c.taskId === task.id)?.column).toBe('done');
    expect(b.cards(null).find((c) => c.taskId === task.id)?.column).toBe('done');
    expect(h.errors).toEqual([]);
  } finally {
    await h.close();
  }
});

it('a rolling deploy over two nodes keeps every cap and runs each job once', async () => {
  const h = await createTestRuntime({ caps: { maxRunning: 3, defaultUserCap: 1 } });
  try {
    const b = await h.addNode({ nodeId: 'node-b' });
    const users = ['ann', 'bob', 'cat'];
    for (let i = 0; i < 9; i++) {
      const through = i % 2 === 0 ? h.runtime : b;
      await through.submit(users[i % 3] ?? 'ann', agent(20));
    }
    let peak = { all: 0, maxPerUser: 0 };
    const step = async (ms: number) => {
      await h.advance(ms);
      const now = await runningNow(h);
      peak = {
        all: Math.max(peak.all, now.all),
        maxPerUser: Math.max(peak.maxPerUser, now.maxPerUser),
      };
    };
    await step(5_000);
    // Node A is replaced by its new version, then node B by a new node.
    await h.deploy();
    await step(5_000);
    b.kill();
    await h.addNode({ nodeId: 'node-c' });
    for (let i = 0; i < 40; i++) await step(5_000);
    expect(peak.all).toBeLessThanOrEqual(3);
    expect(peak.maxPerUser).toBe(1);
    const tasks = await h.tasks();
    const sessions = await h.sessions();
    for (const t of tasks)
      expect(sessions.filter((s) => s.taskId === t.id && s.status === 'succeeded')).toHaveLength(1);
    expect(h.nodes.map((n) => n.owner)).toEqual(['node-b@added1', 'node-c@added2']);
    expect(h.errors).toEqual([]);
  } finally {
    await h.close();
  }
});

it('refuses an addNode without a node id, with an unknown key, or after close', async () => {
  const h = await createTestRuntime();
  await expect(h.addNode({} as never)).rejects.toBeInstanceOf(HarnessArgumentError);
  await expect(h.addNode({ nodeId: 'b', nodeID: 'c' } as never)).rejects.toMatchObject({
    field: 'addNode.nodeID',
  });
  await h.close();
  await expect(h.addNode({ nodeId: 'b' })).rejects.toBeInstanceOf(HarnessClosedError);
});
