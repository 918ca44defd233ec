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
import { createTestRuntime, type TestRuntime } from '../../src/testing/index.js';
import { advanceAll } from '../support/multiNode.js';
import { pgliteStore } from '../support/pgliteRuntimes.js';

const store = pgliteStore();
let h: TestRuntime | undefined;
let b: Runtime | undefined;
afterEach(async () => {
  b?.kill();
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
