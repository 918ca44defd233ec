/**
 * Retention, with two runtimes on one database and one virtual clock:
 * finished work past `retentionMs` leaves both nodes' boards (their
 * subscribers are told) and the store (the Reconciler's step 5); work that
 * ended later, or has not ended, stays; a node booting afterwards loads
 * none of it; `retentionMs: null` keeps everything.
 */
import { expect, test } from 'vitest';
import { createRuntime } from '../../src/actors/runtime.js';
import type { Runtime } from '../../src/actors/runtimeTypes.js';
import { SimulatedBackend } from '../../src/containers/simulated/SimulatedBackend.js';
import { createTestRuntime, type TestRuntime } from '../../src/testing/index.js';
import { describeEachEngine } from '../support/databases.js';
import { advanceAll, nodesOfEachTest, settleAll } from '../support/multiNode.js';

const nodes = nodesOfEachTest();

const MINUTE = 60_000;
const RETENTION = 10 * MINUTE;
const agent = (seconds: number) => ({
  title: 'work',
  image: 'runner:v1',
  command: ['agent', String(seconds)],
});

describeEachEngine('runtime: retention', (getDb) => {
  const boot = async (harness: TestRuntime, nodeId: string, retentionMs: number | null) => {
    const errors: unknown[] = [];
    const node = await createRuntime({
      db: getDb().db,
      backend: new SimulatedBackend(harness.cluster),
      clock: harness.clock,
      caps: { maxRunning: 4, defaultUserCap: 2 },
      reconcileMs: MINUTE,
      retentionMs,
      nodeId,
      bootId: 'b1',
      onError: (e) => errors.push(e),
    });
    nodes.others.push(node);
    return { node, errors };
  };
  /** Node A, the harness's, stopped after the test. */
  const harness = async (retentionMs: number | null) => {
    nodes.h = await createTestRuntime({
      db: getDb().db,
      nodeId: 'nodeA',
      reconcileMs: MINUTE,
      retentionMs,
    });
    return nodes.h;
  };
  const removals = (node: Runtime) => {
    const removed: string[] = [];
    node.subscribe(() => {}, { passive: true, onRemoved: (ids) => removed.push(...ids) });
    return removed;
  };
  const taskIds = async () => (await nodes.h!.tasks()).map((t) => t.id).sort();
  const cardIds = (node: Runtime) =>
    node
      .cards(null)
      .map((c) => c.taskId)
      .sort();

  test('finished work past retention leaves every board and the store; the rest stays', async () => {
    const h = await harness(RETENTION);
    const a = h.runtime;
    const { node: b, errors: errorsB } = await boot(h, 'nodeB', RETENTION);
    const both = [a, b];
    const removedA = removals(a);
    const removedB = removals(b);
    const early = [
      (await a.createTask('ann', agent(1))).taskId,
      (await b.createTask('bob', agent(1))).taskId,
    ].sort();
    await advanceAll(h, both, 5 * MINUTE);
    const late = (await a.createTask('ann', agent(1))).taskId;
    const long = (await b.createTask('cat', agent(3_600))).taskId;
    await advanceAll(h, both, 2 * MINUTE);
    const kept = [late, long].sort();
    expect(cardIds(a)).toEqual([...early, ...kept].sort());
    expect(cardIds(b)).toEqual([...early, ...kept].sort());

    // The early runs ended ~1 s in; past 10 min and a beat, both boards let them go,
    // and a pass later the rows are gone too.
    await advanceAll(h, both, 5 * MINUTE);
    expect(removedA.sort()).toEqual(early);
    expect(removedB.sort()).toEqual(early);
    expect(cardIds(a)).toEqual(kept);
    expect(cardIds(b)).toEqual(kept);
    expect(await taskIds()).toEqual(kept);

    // A node booting now loads only what is kept.
    const { node: c } = await boot(h, 'nodeC', RETENTION);
    await c.booted;
    await settleAll([...both, c]);
    expect(cardIds(c)).toEqual(kept);

    // The long run ends an hour after it started (~65 min); ten minutes and a pass later it goes too.
    await advanceAll(h, [...both, c], 65 * MINUTE);
    expect(await taskIds()).toEqual([]);
    for (const n of [a, b, c]) expect(n.cards(null)).toEqual([]);
    expect(h.errors).toEqual([]);
    expect(errorsB).toEqual([]);
    // Its own budget, not the suite's 30 s: three nodes on one PGlite stepped
    // through hours of virtual time took 24-28 s of CI's workers on 8
    // December, and 30.5 s once (a timeout, not a failure of what it checks).
  }, 90_000);

  test('retentionMs: null keeps every finished task, on the board and in the store', async () => {
    const h = await harness(null);
    const removed = removals(h.runtime);
    const { taskId } = await h.runtime.createTask('ann', agent(1));
    await h.advance(30 * MINUTE);
    expect(await taskIds()).toEqual([taskId]);
    expect(cardIds(h.runtime)).toEqual([taskId]);
    expect(removed).toEqual([]);
    expect(h.errors).toEqual([]);
  });
});
