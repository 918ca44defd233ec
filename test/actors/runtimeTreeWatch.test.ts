/**
 * The tree watch over a real supervision tree of test workers: the
 * listeners' feed, restart counts, finished runners forgotten, and the live
 * runners told when the pool restarts (test/actors/runtime.poolRestart.test.ts
 * runs it in a whole runtime).
 */
import { afterEach, expect, test } from 'vitest';
import { SimulatedClock } from 'xstate';
import { TreeWatch } from '../../src/actors/runtimeTreeWatch.js';
import {
  type Supervisor,
  type SupervisorEvent,
  startSupervisor,
} from '../../src/supervisor/index.js';
import { settle, worker } from '../supervisor/workers.js';

let root: Supervisor | undefined;
afterEach(async () => {
  await root?.shutdown();
  root = undefined;
});

async function setup(dead = false, onListener?: (watch: TreeWatch) => void) {
  root = await startSupervisor(
    {
      id: 'root',
      children: [
        { id: 'pool', start: { logic: worker } },
        { id: 'runners', start: { supervisor: { children: [], intensity: 20, periodMs: 5_000 } } },
      ],
    },
    { clock: new SimulatedClock() },
  );
  const told: string[] = [];
  const errors: unknown[] = [];
  let restarts = 0;
  const watch = new TreeWatch({
    root,
    runnersId: 'runners',
    poolId: 'pool',
    runners: {
      live: () => new Set(['ses_1', 'ses_2']),
      tell: (id, event) => {
        told.push(`${id} ${event.type}`);
        return true;
      },
    },
    onRestart: () => {
      restarts += 1;
    },
    isDead: () => dead,
    onError: (e) => errors.push(e),
  });
  onListener?.(watch);
  const events: SupervisorEvent[] = [];
  watch.subscribe((e) => events.push(e));
  const runners = (): Supervisor => {
    const sup = root?.childSupervisor('runners');
    if (sup === undefined) throw new Error('the runners supervisor is not running');
    return sup;
  };
  return { root, watch, told, events, errors, runners, restarts: () => restarts };
}

test('a restarted pool: every live runner is told to hold again, and the restart is counted', async () => {
  const t = await setup();
  await t.root.exitChild('pool', 'kill');
  await settle();
  expect(t.told).toEqual([
    'ses_1 roundtable.runner.pool_restarted',
    'ses_2 roundtable.runner.pool_restarted',
  ]);
  expect(t.restarts()).toBe(1);
  expect(t.events.map((e) => e.type)).toContain('roundtable.child.restarting');
});

test('a runner that finished is forgotten; one that crashed is restarted and counted', async () => {
  const t = await setup();
  const done = await t
    .runners()
    .startChild({ id: 'ses_1', restart: 'transient', start: { logic: worker } });
  await t.runners().startChild({ id: 'ses_2', restart: 'transient', start: { logic: worker } });
  done.send({ type: 'EXIT' });
  await t.runners().exitChild('ses_2', 'kill');
  await settle();
  expect(
    t
      .runners()
      .whichChildren()
      .map((c) => c.id),
  ).toEqual(['ses_2']);
  expect(t.restarts()).toBe(1);
  expect(t.events.filter((e) => e.supervisorId !== 'root').map((e) => e.type)).toContain(
    'roundtable.child.exited',
  );
});

test("the runners' supervisor is followed across its restart", async () => {
  const t = await setup();
  const first = t.runners();
  await t.root.exitChild('runners', 'kill');
  await settle();
  expect(t.runners()).not.toBe(first);
  const ref = await t
    .runners()
    .startChild({ id: 'ses_3', restart: 'transient', start: { logic: worker } });
  ref.send({ type: 'EXIT' });
  await settle();
  expect(t.runners().whichChildren()).toEqual([]);
  // The pool did not restart: nobody was told.
  expect(t.told).toEqual([]);
});

test('a stopped runtime tells nobody and keeps finished runners listed', async () => {
  const t = await setup(true);
  const ref = await t
    .runners()
    .startChild({ id: 'ses_1', restart: 'transient', start: { logic: worker } });
  ref.send({ type: 'EXIT' });
  await t.root.exitChild('pool', 'kill');
  await settle();
  expect(t.told).toEqual([]);
  expect(
    t
      .runners()
      .whichChildren()
      .map((c) => c.id),
  ).toEqual(['ses_1']);
});

test("a listener that throws is reported; the listeners after it still hear, and the watch's own work is done", async () => {
  const bug = new Error('listener bug');
  const t = await setup(false, (watch) =>
    watch.subscribe(() => {
      throw bug;
    }),
  );
  const done = await t
    .runners()
    .startChild({ id: 'ses_1', restart: 'transient', start: { logic: worker } });
  done.send({ type: 'EXIT' });
  await t.root.exitChild('pool', 'kill');
  await settle();
  // The finished runner is forgotten, the restart counted, the pool's restart told.
  expect(t.runners().whichChildren()).toEqual([]);
  expect(t.restarts()).toBe(1);
  expect(t.told).toContain('ses_1 roundtable.runner.pool_restarted');
  expect(t.events.map((e) => e.type)).toContain('roundtable.child.restarting');
  expect(t.errors.length).toBe(t.events.length);
  for (const e of t.errors) expect(e).toMatchObject({ listener: 'supervisor_event', cause: bug });
});
