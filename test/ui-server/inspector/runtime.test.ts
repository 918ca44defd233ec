/**
 * The inspector on the real runtime (PGlite in memory, a simulated Swarm, a
 * virtual clock): the root tree, a TaskRunner's statechart and its slot
 * grant, seen through the admin topic; and, with the inspector's gate, a
 * viewer that connects mid-run.
 */
import type { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRuntime } from '../../../src/actors/runtime.js';
import type { Runtime } from '../../../src/actors/runtimeTypes.js';
import { SimulatedBackend } from '../../../src/containers/simulated/SimulatedBackend.js';
import { SimulatedCluster } from '../../../src/containers/simulated/SimulatedCluster.js';
import { connect, type DbHandle, migrate } from '../../../src/db/index.js';
import { migratedPglite } from '../../../src/testing/migratedPglite.js';
import { TestClock } from '../../../src/testing/TestClock.js';
import {
  createInspector,
  type Inspector,
} from '../../../src/ui-server/inspector/createInspector.js';
import {
  type InspectorServer,
  startInspectorServer,
} from '../../../src/ui-server/inspector/startInspectorServer.js';
import { InspectClient } from './inspectClient.js';

const ADMIN = 'admin-token-0123456789';

/** A node on PGlite in memory and a simulated Swarm, inspected by `inspect`. */
async function bootNode(
  clock: TestClock,
  inspect: Inspector['observer'] | Inspector['gate'],
  errors: unknown[],
) {
  const pglite = await migratedPglite();
  const handle = await connect({ pglite });
  await migrate(handle.db);
  const runtime = await createRuntime({
    db: handle.db,
    backend: new SimulatedBackend(new SimulatedCluster({ clock })),
    clock,
    caps: { maxRunning: 4, defaultUserCap: 2 },
    nodeId: 'inspect-node',
    bootId: 'boot1',
    inspect,
    onError: (e) => errors.push(e),
  });
  return { pglite, handle, runtime };
}

describe('inspector on the runtime', () => {
  let pglite: PGlite;
  let handle: DbHandle;
  let runtime: Runtime;
  let inspector: Inspector;
  let server: InspectorServer;
  let clock: TestClock;
  const errors: unknown[] = [];

  /** Turns of the event loop until no I/O is in flight (never real time as such). */
  const settle = async () => {
    let quiet = 0;
    for (let i = 0; i < 20_000 && quiet < 3; i++) {
      await new Promise<void>((r) => setImmediate(r));
      quiet = runtime.busy() === 0 ? quiet + 1 : 0;
    }
    if (quiet < 3) throw new Error('runtime did not settle');
  };

  beforeAll(async () => {
    clock = new TestClock();
    // The virtual clock stands still here: a tree frame with every flush.
    inspector = createInspector({ clock, treeIntervalMs: 0 });
    ({ pglite, handle, runtime } = await bootNode(clock, inspector.observer, errors));
    await settle();
    server = await startInspectorServer({
      inspector,
      tokens: { admin: ADMIN },
      port: 0,
      host: '127.0.0.1',
    });
  });

  afterAll(async () => {
    await server?.close();
    runtime?.kill();
    await handle?.close();
    await pglite?.close();
  });

  it('shows the root tree, a TaskRunner’s statechart, and its slot grant', async () => {
    const c = await InspectClient.open(server.url, ADMIN);
    try {
      const t0 = await c.take('tree');
      const root = t0.tree.supervisors[runtime.root.sessionId]!;
      // The runtime's tree grows (a heartbeat is landing): check the parts we rely on.
      expect(root.children.map((ch) => ch.id)).toEqual(
        expect.arrayContaining(['runnerPool', 'taskRunners', 'reconciler']),
      );
      expect(root.children.every((ch) => ch.status === 'running')).toBe(true);

      const { session } = await runtime.submit('alice', {
        title: 'long job',
        image: 'alpine:3',
        command: ['sleep', '600'],
      });
      await settle();
      inspector.flush();
      const tree = await c.take('tree', (f) =>
        Object.values(f.tree.supervisors).some((s) =>
          s.children.some((ch) => ch.id === session.id),
        ),
      );
      const runners = Object.values(tree.tree.supervisors).find((s) => s.id === 'taskRunners')!;
      const runner = runners.children.find((ch) => ch.id === session.id)!;
      expect(runner.status).toBe('running');
      const line = await c.take('timeline', (f) => f.entries.some((e) => e.kind === 'grant'));
      expect(line.entries.find((e) => e.kind === 'grant')?.subject).toBe(session.id);

      c.send({ type: 'select', sessionId: runner.sessionId });
      const actor = await c.take('actor');
      expect(actor.graph?.rootId).toBe('taskRunner');
      expect(actor.graph?.nodes.length).toBeGreaterThan(5);
      expect(actor.active[0]).toBe('taskRunner');
      expect(actor.active.length).toBeGreaterThan(1);
      expect(actor.context).toMatchObject({ sessionId: session.id, userId: 'alice' });
      // The ContainerRun it invoked is listed under it.
      expect(tree.actors.some((a) => a.parentId === runner.sessionId)).toBe(true);

      // The RunnerPool monitors the runner: an edge pool -> runner.
      const pool = tree.tree.supervisors[runtime.root.sessionId]!.children.find(
        (ch) => ch.id === 'runnerPool',
      )!;
      const edges = Object.values(tree.tree.monitors).filter(
        (m) => m.targetSessionId === runner.sessionId,
      );
      expect(edges).toHaveLength(1);
      expect(edges[0]).toMatchObject({ watcherSessionId: pool.sessionId, targetId: session.id });

      // Crash the runner through the admin API: the pool gets DOWN (on the
      // timeline), the runner is restarted, and the pool monitors the new one.
      const res = await fetch(`${server.url}/inspect/api/exit`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ sessionId: runner.sessionId, reason: 'kill' }),
      });
      expect(res.status).toBe(200);
      await settle();
      inspector.flush();
      const after = await c.take(
        'tree',
        (f) =>
          Object.values(f.tree.supervisors)
            .find((s) => s.id === 'taskRunners')
            ?.children.some((ch) => ch.id === session.id && ch.restartCount === 1) ?? false,
      );
      const again = Object.values(after.tree.supervisors)
        .find((s) => s.id === 'taskRunners')!
        .children.find((ch) => ch.id === session.id)!;
      expect(again.sessionId).not.toBe(runner.sessionId);
      const newEdges = Object.values(after.tree.monitors).filter((m) => m.targetId === session.id);
      expect(newEdges.map((m) => [m.watcherSessionId, m.targetSessionId])).toEqual([
        [pool.sessionId, again.sessionId],
      ]);
      // A flush sends the tree, then the timeline.
      const down = await c.take('timeline', (f) => f.entries.some((e) => e.kind === 'down'));
      expect(down.entries.find((e) => e.kind === 'down')).toMatchObject({
        subject: session.id,
        sessionId: pool.sessionId,
        text: expect.stringMatching(/^DOWN to runnerPool: killed/),
        alarm: true,
      });

      expect(errors).toEqual([]);
    } finally {
      c.close();
    }
  });
});

describe('inspector gate on the runtime: a viewer that connects mid-run', () => {
  it('sees the tree, a running TaskRunner’s current state and its monitor; nothing is followed after it leaves', async () => {
    const clock = new TestClock();
    const inspector = createInspector({ clock, treeIntervalMs: 0 });
    const errors: unknown[] = [];
    const { pglite, handle, runtime } = await bootNode(clock, inspector.gate, errors);
    const settle = async () => {
      let quiet = 0;
      for (let i = 0; i < 20_000 && quiet < 3; i++) {
        await new Promise<void>((r) => setImmediate(r));
        quiet = runtime.busy() === 0 ? quiet + 1 : 0;
      }
    };
    const server = await startInspectorServer({
      inspector,
      tokens: { admin: ADMIN },
      port: 0,
      host: '127.0.0.1',
    });
    let c: InspectClient | undefined;
    try {
      // The run starts, with nobody watching: no actor frames are collected.
      const { session } = await runtime.submit('alice', {
        title: 'long job',
        image: 'alpine:3',
        command: ['sleep', '600'],
      });
      await settle();
      const framesBefore = inspector.stats().frames;
      const runner = () =>
        Object.values(inspector.collector.tree.supervisors)
          .find((s) => s.id === 'taskRunners')
          ?.children.find((ch) => ch.id === session.id);
      // The tree is kept from the supervision events alone.
      expect(runner()?.status).toBe('running');
      expect(inspector.collector.actors.get(runner()!.sessionId!)).toBeUndefined();

      c = await InspectClient.open(server.url, ADMIN);
      const tree = await c.take('tree', (f) =>
        f.actors.some((a) => a.sessionId === runner()?.sessionId),
      );
      const runnerSession = runner()!.sessionId!;
      expect(tree.actors.find((a) => a.sessionId === runnerSession)).toMatchObject({
        status: 'active',
        machine: true,
      });
      // The ContainerRun it invoked before anyone looked is listed under it.
      expect(tree.actors.find((a) => a.parentId === runnerSession)?.id).toBe('containerRun');
      const edges = Object.values(tree.tree.monitors).filter(
        (m) => m.targetSessionId === runnerSession,
      );
      expect(edges).toHaveLength(1);

      c.send({ type: 'select', sessionId: runnerSession });
      const actor = await c.take('actor');
      expect(actor.active).toEqual(['taskRunner', 'taskRunner.running']);
      expect(actor.context).toMatchObject({ sessionId: session.id, userId: 'alice' });

      // Following from here: a cancel is seen as the runner's events.
      await runtime.cancel(null, session.taskId);
      await settle();
      inspector.flush();
      const after = await c.take('tree', (f) =>
        f.actors.some((a) => a.sessionId === runnerSession && a.status !== 'active'),
      );
      expect(after.actors.find((a) => a.sessionId === runnerSession)?.status).not.toBe('active');

      c.close();
      await c.closed;
      c = undefined;
      // The gate closes with the last viewer: a run now is not followed frame by frame.
      await settle();
      const closedAt = inspector.stats().frames;
      await runtime.submit('alice', {
        title: 'unseen',
        image: 'alpine:3',
        command: ['sleep', '600'],
      });
      await settle();
      const unseen = inspector.stats().frames - closedAt;
      // Only supervision frames (the runner's start, the pool's monitor): a handful.
      expect(unseen).toBeLessThan(20);
      expect(framesBefore).toBeGreaterThan(0);
      expect(errors).toEqual([]);
    } finally {
      c?.close();
      await server.close();
      runtime.kill();
      await handle.close();
      await pglite.close();
    }
  });
});
