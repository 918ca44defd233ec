/**
 * A node killed between a run's `start` and the commit of its handle leaves
 * a running row with no handle while the command goes on in its container.
 * Re-queued blind, the task ran twice (seen in clusterLiveness: two execs).
 * Here the run is looked for by name: adopted when its command began,
 * removed first when its container holds nothing, and only the row with
 * nothing found is re-queued as before. Each task's command runs once.
 */
import { afterEach, describe, expect, test } from 'vitest';
import { findUnrecorded } from '../../src/actors/unrecordedRun.js';
import { ContainerError } from '../../src/containers/ContainerError.js';
import { DEFAULT_NAMESPACE, runLabels } from '../../src/containers/namespace.js';
import { SimulatedBackend } from '../../src/containers/simulated/SimulatedBackend.js';
import { SimulatedCluster } from '../../src/containers/simulated/SimulatedCluster.js';
import { wrapperEnv } from '../../src/containers/wrapper.js';
import { createTestRuntime, type TestRuntime } from '../../src/testing/index.js';
import { TestClock } from '../../src/testing/TestClock.js';
import { describeEachEngine } from '../support/databases.js';

const agent = (seconds: number) => ({
  title: 'work',
  image: 'runner:v1',
  command: ['agent', String(seconds)],
});

/** A service for the session with no exec in it: a start cut short after the create. */
function createdOnly(cluster: SimulatedCluster, sessionId: string) {
  return cluster.api.createService({
    name: `rt-${sessionId}`,
    sessionId,
    image: 'runner:v1',
    env: wrapperEnv(sessionId),
    labels: runLabels(DEFAULT_NAMESPACE, sessionId, {}),
  });
}

describe('findUnrecorded', () => {
  const setup = () => {
    const cluster = new SimulatedCluster({
      clock: new TestClock(Date.parse('2026-07-14T10:00:00Z')),
    });
    return { cluster, backend: new SimulatedBackend(cluster) };
  };

  test('a run whose command began is found under its name, begun, with its container start', async () => {
    const { cluster, backend } = setup();
    await backend.start({ sessionId: 's1', image: 'runner:v1', command: ['agent', '60'] });
    const found = await findUnrecorded(backend, 's1');
    expect(found).toMatchObject({ handle: 'rt-s1', presence: 'present', begun: true });
    expect(found.containerStartedAt?.getTime()).toBe(cluster.serviceOf('s1')?.container?.startedAt);
  });

  test('a container with nothing begun in it is present, not begun; no container is absent', async () => {
    const { cluster, backend } = setup();
    await createdOnly(cluster, 's2');
    expect(await findUnrecorded(backend, 's2')).toMatchObject({
      presence: 'present',
      begun: false,
    });
    expect(await findUnrecorded(backend, 's3')).toEqual({
      handle: 'rt-s3',
      presence: 'absent',
      containerStartedAt: null,
    });
  });

  test('an engine that cannot say whether it began is unknown, never not begun', async () => {
    const { cluster, backend } = setup();
    await createdOnly(cluster, 's4');
    const flaky = Object.create(backend) as SimulatedBackend;
    flaky.readOutput = async () => {
      throw new ContainerError('unavailable', 'engine down');
    };
    const found = await findUnrecorded(flaky, 's4');
    expect(found.presence).toBe('unknown');
    expect(found.begun).toBeUndefined();
  });

  test('a backend that cannot name the run finds nothing', async () => {
    const { backend } = setup();
    const blind = Object.create(backend) as SimulatedBackend;
    (blind as { handleOf: (id: string) => string | null }).handleOf = () => null;
    expect(await findUnrecorded(blind, 's5')).toMatchObject({ handle: null, presence: 'absent' });
  });
});

let h: TestRuntime | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describeEachEngine('a boot killed before its run handles were written', (getDb) => {
  /** Three running tasks; then the boot dies and the rows lose their handles. */
  const killedWithoutHandles = async () => {
    h = await createTestRuntime({ db: getDb().db, nodeId: 'nodeA' });
    const ids = [];
    for (const user of ['ann', 'bob', 'cy'])
      ids.push((await h.runtime.createTask(user, agent(120))).sessionId);
    await h.advance(1_000);
    expect((await h.sessions()).map((s) => s.status)).toEqual(['running', 'running', 'running']);
    h.runtime.kill();
    // What the window leaves: the tick carrying the handles never committed.
    await getDb()
      .db.updateTable('sessions')
      .set({ handle: null, started_at: null, backend: null })
      .where('id', 'in', ids)
      .execute();
    return ids as [string, string, string];
  };

  test('the new boot adopts a begun run, discards an empty container, re-queues the rest: each task runs once', async () => {
    const [began, empty, none] = await killedWithoutHandles();
    const harness = h as TestRuntime;
    // `empty`: the start got as far as the create; `none`: not even that.
    await harness.cluster.api.removeService(`rt-${empty}`);
    await createdOnly(harness.cluster, empty);
    await harness.cluster.api.removeService(`rt-${none}`);
    const execsBefore = harness.execLog().length;
    expect(execsBefore).toBe(3);

    await harness.deploy();
    const adopted = (await harness.sessions()).find((s) => s.id === began);
    expect(adopted).toMatchObject({
      status: 'running',
      owner: 'nodeA@boot2',
      handle: `rt-${began}`,
    });
    expect(adopted?.startedAt).not.toBeNull();
    expect(harness.cluster.serviceOf(empty)).toBeUndefined();

    await harness.advance(300_000);
    const rows = await harness.sessions();
    const byTask = new Map<string, string[]>();
    for (const s of rows) byTask.set(s.taskId, [...(byTask.get(s.taskId) ?? []), s.status]);
    // The begun run finished where it was; the other two ran again, once each.
    expect(rows.find((s) => s.id === began)?.status).toBe('succeeded');
    expect(rows.find((s) => s.id === empty)).toMatchObject({
      status: 'failed',
      failureReason: 'owner_lost: its run never began',
    });
    expect(rows.find((s) => s.id === none)).toMatchObject({
      status: 'failed',
      failureReason: 'owner_lost',
    });
    expect([...byTask.values()].map((x) => x.at(-1))).toEqual([
      'succeeded',
      'succeeded',
      'succeeded',
    ]);
    // The begun run's exec is not repeated (its task has one session), and
    // the two that never began ran once each, as their re-queued attempts.
    const execs = harness.execLog();
    expect(execs.filter((e) => e.sessionId === began)).toHaveLength(1);
    const beganTask = rows.find((s) => s.id === began)?.taskId;
    expect(rows.filter((s) => s.taskId === beganTask)).toHaveLength(1);
    expect(execs).toHaveLength(execsBefore + 2);
    expect(harness.errors).toEqual([]);
  });
});
