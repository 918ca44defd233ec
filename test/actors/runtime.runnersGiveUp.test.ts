/**
 * Runners that crash until their supervisor gives up on them all: a store
 * fault no retry is for (XX000) meets every runner's write and read, the
 * runners' supervisor reaches its restart intensity and is restarted with
 * none of them, and the releases of their slots fail too. Once the store
 * answers, every run goes on from where it is: none is started a second
 * time, and no slot stays held by a runner that is gone.
 */
import type { PGlite } from '@electric-sql/pglite';
import { afterAll, afterEach, beforeAll, expect, test } from 'vitest';
import { connect, type DbHandle } from '../../src/db/index.js';
import { createTestRuntime, type TestRuntime } from '../../src/testing/index.js';
import { migratedPglite } from '../../src/testing/migratedPglite.js';
import { switchableStore } from '../support/switchableStore.js';

let pglite: PGlite;
let handle: DbHandle | undefined;
let h: TestRuntime | undefined;

beforeAll(async () => {
  pglite = await migratedPglite();
}, 30_000);
afterEach(async () => {
  await h?.close();
  await handle?.close();
  h = undefined;
  handle = undefined;
});
afterAll(async () => {
  await pglite.close();
});

/**
 * The clock moved to `ms` from now, timer by timer, with a few turns of the
 * loop between: unlike `advance`, it does not wait for the node's I/O to
 * settle, which work waiting on a retry timer (a release behind a failed
 * tick) never does while the clock stands still.
 */
async function drive(rt: TestRuntime, ms: number): Promise<void> {
  const target = rt.clock.now() + ms;
  const turns = async () => {
    for (let i = 0; i < 20; i++) await new Promise<void>((resolve) => setImmediate(resolve));
  };
  for (;;) {
    await turns();
    const due = rt.clock.nextDue(target);
    if (due === null) break;
    rt.clock.fireNext(due);
  }
  rt.clock.fireNext(target);
  await turns();
}

test('after a store fault that took every runner down, each run is taken up again, never run twice', async () => {
  handle = await connect({ pglite });
  const store = switchableStore(handle.db);
  h = await createTestRuntime({ db: store.db, pollMs: 5_000 });
  await h.runtime.booted;
  const long = await h.runtime.createTask('alice', {
    title: 'long',
    image: 'runner:v1',
    command: ['agent', '120'],
  });
  const short = await h.runtime.createTask('bob', {
    title: 'short',
    image: 'runner:v1',
    command: ['agent', '30'],
  });
  await h.advance(5_000);
  expect((await h.sessions()).map((s) => s.handle !== null)).toEqual([true, true]);

  store.down('fault');
  // The short run ends meanwhile: its finish meets the fault, its runner
  // crashes, and so does every incarnation after it.
  await drive(h, 40_000);
  store.up();
  await drive(h, 200_000);
  await h.advance(1_000);

  const sessions = await h.sessions();

  const byTask = (taskId: string) => sessions.filter((s) => s.taskId === taskId);
  for (const { taskId } of [long, short]) {
    expect(byTask(taskId).map((s) => s.status)).toEqual(['succeeded']);
    const card = h.board().find((c) => c.taskId === taskId);
    expect(card).toMatchObject({ column: 'done', status: 'succeeded' });
    expect(card?.lastOutput.at(-1)).toBe('[agent] done');
  }
  // One exec per session: no command started twice.
  const execs = h.execLog();
  expect(execs.map((e) => e.sessionId).sort()).toEqual(sessions.map((s) => s.id).sort());
  // No slot held for a runner that is gone.
  expect(h.runtime.health()).toMatchObject({ holding: 0 });
});
