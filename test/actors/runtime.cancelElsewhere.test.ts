/**
 * A cancel sent through a node where the run has no runner (it runs on
 * another node) removes the run's container itself. A backend whose
 * `remove` throws instead of rejecting must not turn that applied cancel
 * into an error for its caller: the throw goes to `onError`, as a rejection
 * does.
 */
import { afterEach, expect, test } from 'vitest';
import { createRuntime } from '../../src/actors/runtime.js';
import type { Runtime } from '../../src/actors/runtimeTypes.js';
import type { RunRef } from '../../src/containers/ContainerBackend.js';
import { SimulatedBackend } from '../../src/containers/simulated/SimulatedBackend.js';
import { SimulatedCluster } from '../../src/containers/simulated/SimulatedCluster.js';
import { createTestRuntime, type TestRuntime } from '../../src/testing/index.js';
import { advanceAll, killAll } from '../support/multiNode.js';
import { pgliteStore } from '../support/pgliteRuntimes.js';

const store = pgliteStore();
let h: TestRuntime | undefined;
let b: Runtime | undefined;
afterEach(async () => {
  if (b) await killAll([b]);
  b = undefined;
  await h?.close();
  h = undefined;
});

/** A simulated backend whose `remove` throws on the spot (a hand-written backend's bug). */
class ThrowingRemove extends SimulatedBackend {
  override remove(_ref: RunRef): Promise<void> {
    throw new Error('remove bug');
  }
}

test("a cancel through another node is applied, and its backend's throwing remove is reported", async () => {
  h = await createTestRuntime({ db: store.db, nodeId: 'node-a', dispatchPollMs: 500 });
  const errors: unknown[] = [];
  const node = await createRuntime({
    db: store.db,
    backend: new ThrowingRemove(h.cluster),
    clock: h.clock,
    caps: { maxRunning: 4, defaultUserCap: 2 },
    nodeId: 'node-b',
    bootId: 'b',
    dispatchPollMs: 500,
    onError: (e) => errors.push(e),
  });
  b = node;
  const nodes = [h.runtime, node];
  const { task } = await h.runtime.submit('alice', {
    title: 't',
    image: 'runner:v1',
    command: ['agent', '600'],
  });
  await advanceAll(h, nodes, 2_000);
  expect((await h.sessions()).find((s) => s.taskId === task.id)).toMatchObject({
    status: 'running',
    owner: expect.stringMatching(/^node-a@/),
  });

  await expect(node.cancel(null, task.id)).resolves.toBeUndefined();
  await advanceAll(h, nodes, 1_000);
  expect((await h.sessions()).find((s) => s.taskId === task.id)?.status).toBe('cancelled');
  expect(errors.map((e) => (e as Error).message)).toContain('remove bug');
});

test('a cancel through a node that cannot reach the run stops it on its owner as soon as the feed brings the row, not a heartbeat later', async () => {
  // Heartbeats ~200 s apart: only the feed can tell node A in time.
  const reconcileMs = 600_000;
  h = await createTestRuntime({ db: store.db, nodeId: 'node-a', dispatchPollMs: 500, reconcileMs });
  const errors: unknown[] = [];
  // Node B's engine is another machine's: A's run is not there to remove.
  const elsewhere = new SimulatedCluster({ clock: h.clock, nodes: ['other-machine'] });
  const node = await createRuntime({
    db: store.db,
    backend: new SimulatedBackend(elsewhere),
    clock: h.clock,
    caps: { maxRunning: 4, defaultUserCap: 2 },
    nodeId: 'node-b',
    bootId: 'b',
    dispatchPollMs: 500,
    reconcileMs,
    onError: (e) => errors.push(e),
  });
  b = node;
  const nodes = [h.runtime, node];
  const { task, session } = await h.runtime.submit('alice', {
    title: 't',
    image: 'runner:v1',
    command: ['agent', '600'],
  });
  await advanceAll(h, nodes, 2_000);
  expect(h.cluster.serviceOf(session.id)).toBeDefined();
  expect(h.runtime.health().holding).toBe(1);

  await node.cancel(null, task.id);
  await advanceAll(h, nodes, 1_000);
  expect((await h.sessions()).find((s) => s.taskId === task.id)?.status).toBe('cancelled');
  // A stopped its run and gave its slot back, a poll after the cancel at most.
  expect(h.cluster.serviceOf(session.id)).toBeUndefined();
  expect(h.runtime.health().holding).toBe(0);
  expect(h.errors).toEqual([]);
});
