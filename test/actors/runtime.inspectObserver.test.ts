/**
 * An inspection observer that throws (the app's `inspect`, or an
 * inspector's gate) cannot take the node down: XState calls it inside the
 * actors' own steps, where a throw used to fail the RunnerPool's start (so
 * `createRuntime` rejected) or a runner mid-run. The node boots, runs its
 * jobs, and its `onError` hears each throw as an `InspectObserverError`.
 */
import { PGlite } from '@electric-sql/pglite';
import { afterAll, afterEach, beforeAll, expect, test } from 'vitest';
import { createRuntime } from '../../src/actors/runtime.js';
import type { Runtime } from '../../src/actors/runtimeTypes.js';
import { SimulatedBackend } from '../../src/containers/simulated/SimulatedBackend.js';
import { SimulatedCluster } from '../../src/containers/simulated/SimulatedCluster.js';
import { connect, type DbHandle, migrate } from '../../src/db/index.js';
import { InspectionGate, InspectObserverError } from '../../src/supervisor/index.js';
import { TestClock } from '../../src/testing/TestClock.js';

let pglite: PGlite;
let handle: DbHandle;
let runtime: Runtime | undefined;
beforeAll(async () => {
  pglite = await PGlite.create('memory://');
  handle = await connect({ pglite });
  await migrate(handle.db);
}, 30_000);
afterEach(() => {
  runtime?.kill();
  runtime = undefined;
});
afterAll(async () => {
  await handle.close();
  await pglite.close();
});

/** Turns of the event loop until the node has no I/O in flight (virtual time stands still). */
async function settle(node: Runtime): Promise<void> {
  let quiet = 0;
  for (let i = 0; i < 20_000 && quiet < 3; i++) {
    await new Promise<void>((r) => setImmediate(r));
    quiet = node.busy() === 0 ? quiet + 1 : 0;
  }
  if (quiet < 3) throw new Error('runtime did not settle');
}

/** Moves virtual time by `ms`, firing each timer due in order and settling after each. */
async function advance(node: Runtime, clock: TestClock, ms: number): Promise<void> {
  const target = clock.now() + ms;
  for (let due = clock.nextDue(target); due !== null; due = clock.nextDue(target)) {
    clock.fireNext(due);
    await settle(node);
  }
  clock.fireNext(target);
  await settle(node);
}

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
      db: handle.db,
      backend: new SimulatedBackend(new SimulatedCluster({ clock })),
      clock,
      caps: { maxRunning: 2, defaultUserCap: 1 },
      nodeId: 'n',
      bootId: name.length.toString(),
      inspect: make(),
      onError: (e) => errors.push(e),
    });
    runtime = node;
    await settle(node);
    const { task } = await node.submit('alice', {
      title: 't',
      image: 'alpine:3',
      command: ['sleep', '2'],
    });
    await settle(node);
    expect(node.cards('alice').find((c) => c.taskId === task.id)?.status).toBe('running');
    await advance(node, clock, 3_000);
    expect(node.cards('alice').find((c) => c.taskId === task.id)?.status).toBe('succeeded');
    expect(errors.length).toBeGreaterThan(0);
    expect(errors.every((e) => e instanceof InspectObserverError && e.cause === bug)).toBe(true);
  });
}
