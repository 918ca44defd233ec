/**
 * A start and the row can cross: the row is failed and re-queued elsewhere
 * (a Reconciler that judged this node dead while its start was under way,
 * and found no container yet) and only then does the container come up. The
 * tick refuses the run's handle; the node stops that run at once, container
 * and slot, instead of letting it run beside the next attempt until a sweep
 * finds it. A row another node adopted meanwhile keeps its container (the
 * adopter may have found it by name): only the runner here stops.
 */
import type { PGlite } from '@electric-sql/pglite';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { requeueFinish } from '../../src/actors/runnerFinish.js';
import { createRuntime } from '../../src/actors/runtime.js';
import type { Runtime } from '../../src/actors/runtimeTypes.js';
import type { ContainerBackend } from '../../src/containers/ContainerBackend.js';
import { SimulatedBackend } from '../../src/containers/simulated/SimulatedBackend.js';
import { SimulatedCluster } from '../../src/containers/simulated/SimulatedCluster.js';
import { adopt, connect, type DbHandle, getSession, tick } from '../../src/db/index.js';
import { migratedPglite } from '../../src/testing/migratedPglite.js';
import { TestClock } from '../../src/testing/TestClock.js';

let pglite: PGlite;
let handle: DbHandle | undefined;
let rt: Runtime | undefined;
beforeAll(async () => {
  pglite = await migratedPglite();
}, 30_000);
afterEach(async () => {
  await rt?.stop().catch(() => undefined);
  await handle?.close();
  rt = handle = undefined;
});
afterAll(async () => {
  await pglite.close();
});

const turns = async (n = 40) => {
  for (let i = 0; i < n; i++) await new Promise<void>((r) => setImmediate(r));
};

/** A node whose backend's starts wait at a gate the test opens. */
async function gatedNode() {
  await pglite.exec('TRUNCATE tasks, sessions CASCADE');
  handle = await connect({ pglite });
  const clock = new TestClock();
  const cluster = new SimulatedCluster({ clock });
  const sim = new SimulatedBackend(cluster);
  let open: () => void = () => {};
  const gate = new Promise<void>((r) => {
    open = r;
  });
  let starting = 0;
  const backend: ContainerBackend = Object.assign(Object.create(sim) as ContainerBackend, {
    start: async (spec: Parameters<ContainerBackend['start']>[0]) => {
      starting += 1;
      await gate;
      return sim.start(spec);
    },
  });
  rt = await createRuntime({
    db: handle.db,
    backend,
    clock,
    caps: { maxRunning: 2, defaultUserCap: 2 },
    nodeId: 'n1',
    bootId: 'b1',
    // No Reconciler pass and no sweep in the test's time: the refusal alone must act.
    reconcileMs: 3_600_000,
    onError: () => {},
  });
  await rt.booted;
  const created = await rt.submit('ann', {
    title: 'long',
    image: 'runner:v1',
    command: ['agent', '600'],
  });
  await turns();
  expect(starting).toBe(1);
  const db = handle.db;
  return { db, sim, open, clock, first: created.session.id };
}

describe('a run whose handle the tick refused', () => {
  it('is stopped at once when its row was failed and re-queued elsewhere: container removed, slot given back', async () => {
    const { db, sim, open, first } = await gatedNode();
    const s = await getSession(db, first);
    // What the Reconciler of another node writes for a run it found no container of.
    await tick(db, {
      owner: 'n2@b1',
      now: new Date(),
      globalCap: 2,
      defaultUserCap: 2,
      want: 0,
      ops: [{ ...requeueFinish(s, 'owner_lost: its run never began'), ref: '1' }],
    });
    open();
    await turns(200);
    const handles = (await sim.listHandles()).map((h) => h.sessionId);
    expect(handles).not.toContain(first);
    expect(rt?.liveRunners()).not.toContain(first);
    // The next attempt runs here, alone.
    expect(handles).toHaveLength(1);
    expect((await getSession(db, first)).status).toBe('failed');
  });

  it('adopted by another node meanwhile: the runner here stops, the container is left to the adopter', async () => {
    const { db, sim, open, first } = await gatedNode();
    const s = await getSession(db, first);
    await adopt(db, { sessionId: s.id, epoch: s.epoch, owner: 'n2@b1', now: new Date() });
    open();
    await turns(200);
    expect((await sim.listHandles()).map((h) => h.sessionId)).toEqual([first]);
    expect(rt?.liveRunners()).not.toContain(first);
    expect(rt?.health().holding).toBe(0);
  });
});
