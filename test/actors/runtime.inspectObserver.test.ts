/**
 * An inspection observer that throws (the app's `inspect`, or an
 * inspector's gate) cannot take the node down: XState calls it inside the
 * actors' own steps, where a throw used to fail the RunnerPool's start (so
 * `createRuntime` rejected) or a runner mid-run. The node boots, runs its
 * jobs, and its `onError` hears each throw as an `InspectObserverError`.
 */
import { afterEach, expect, test } from 'vitest';
import { createRuntime } from '../../src/actors/runtime.js';
import type { Runtime } from '../../src/actors/runtimeTypes.js';
import { SimulatedBackend } from '../../src/containers/simulated/SimulatedBackend.js';
import { SimulatedCluster } from '../../src/containers/simulated/SimulatedCluster.js';
import { InspectionGate, InspectObserverError } from '../../src/supervisor/index.js';
import { TestClock } from '../../src/testing/TestClock.js';
import { advanceAll, settleAll } from '../support/multiNode.js';
import { pgliteStore } from '../support/pgliteRuntimes.js';

const store = pgliteStore();
let runtime: Runtime | undefined;
afterEach(() => {
  runtime?.kill();
  runtime = undefined;
});

const bug = new Error('observer bug');
const observers = {
  'a plain observer': () => () => {
    throw bug;
  },
  "an inspector's gate, open": () => {
    const gate = new InspectionGate(() => {
      throw bug;
    });
    gate.open();
    return gate;
  },
};

for (const [name, make] of Object.entries(observers)) {
  test(`${name} that throws on every frame: the node boots and runs a job to the end`, async () => {
    const clock = new TestClock();
    const errors: unknown[] = [];
    const node = await createRuntime({
      db: store.db,
      backend: new SimulatedBackend(new SimulatedCluster({ clock })),
      clock,
      caps: { maxRunning: 2, defaultUserCap: 1 },
      nodeId: 'n',
      bootId: name.length.toString(),
      inspect: make(),
      onError: (e) => errors.push(e),
    });
    runtime = node;
    await settleAll([node]);
    const { task } = await node.submit('alice', {
      title: 't',
      image: 'alpine:3',
      command: ['sleep', '2'],
    });
    await settleAll([node]);
    expect(node.cards('alice').find((c) => c.taskId === task.id)?.status).toBe('running');
    await advanceAll({ clock }, [node], 3_000);
    expect(node.cards('alice').find((c) => c.taskId === task.id)?.status).toBe('succeeded');
    expect(errors.length).toBeGreaterThan(0);
    expect(errors.every((e) => e instanceof InspectObserverError && e.cause === bug)).toBe(true);
  });
}
