/**
 * The RunnerPool is a permanent child of the runtime's root supervisor: it
 * watches the holders of this node's slots (the database decides grants).
 * When it crashes, its restarted incarnation watches nobody, and the runtime
 * tells every live TaskRunner to hold again. Crash it while sessions are
 * queued and running: everything still completes, the caps hold at every
 * instant, and no slot leaks. A holder that dies for good (its supervisor
 * does not restart it) is a DOWN, and its slot goes back in the next tick.
 */
import { afterEach, expect, test } from 'vitest';
import type { AnyActorRef } from 'xstate';
import { heldSessions, type RunnerPoolContext } from '../../src/actors/runnerPool.js';
import type { Session } from '../../src/db/index.js';
import { createTestRuntime, type TestRuntime } from '../../src/testing/index.js';
import { describeEachEngine } from '../support/databases.js';
import { decisionOrder } from '../support/dispatchReplay.js';

let h: TestRuntime | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const CAPS = { maxRunning: 2, defaultUserCap: 1 };
const agent = (seconds: number) => ({
  title: 'work',
  image: 'runner:v1',
  command: ['agent', String(seconds)],
});

/** Replays the history: how many ran at once, overall and per user, at the worst instant. */
async function peakRunning(harness: TestRuntime, rows: Session[]) {
  const events = (await Promise.all(rows.map((s) => harness.events(s.id))))
    .flat()
    .sort(decisionOrder);
  const userOf = new Map(rows.map((s) => [s.id, s.userId]));
  const running = new Map<string, string>();
  let total = 0;
  let perUser = 0;
  for (const e of events) {
    if (e.to === 'running' && e.from === 'queued')
      running.set(e.sessionId, userOf.get(e.sessionId) ?? '');
    if (e.to !== 'running') running.delete(e.sessionId);
    total = Math.max(total, running.size);
    const counts = new Map<string, number>();
    for (const u of running.values()) counts.set(u, (counts.get(u) ?? 0) + 1);
    perUser = Math.max(perUser, ...counts.values(), 0);
  }
  return { total, perUser };
}

const poolActor = (harness: TestRuntime) => harness.runtime.root.child('runnerPool') as AnyActorRef;
const holders = (harness: TestRuntime) =>
  new Set(heldSessions(poolActor(harness).getSnapshot() as { context: RunnerPoolContext }));

describeEachEngine('runtime: the RunnerPool under the root supervisor', (getDb) => {
  test('is a permanent child of the root, and the fair pool answers the board', async () => {
    h = await createTestRuntime({ db: getDb().db, caps: CAPS });
    const info = h.runtime.root.whichChildren().find((c) => c.id === 'runnerPool');
    expect(info).toMatchObject({ restart: 'permanent', status: 'running', type: 'worker' });
    // Fair, not FIFO: ann floods, bob's first session comes before ann's third.
    for (let i = 0; i < 3; i += 1) await h.runtime.createTask('ann', agent(60));
    const bob = await h.runtime.createTask('bob', agent(60));
    await h.settle();
    const rows = await h.sessions();
    expect(rows.find((s) => s.id === bob.sessionId)?.status).toBe('running');
    expect(h.runtime.poolSnapshot()).toMatchObject({ running: 2, queued: 2 });
    expect(holders(h)).toEqual(
      new Set(rows.filter((s) => s.status === 'running').map((s) => s.id)),
    );
  });

  test('a crashed pool restarts, rebuilds from the rows, and every runner rejoins: all complete, caps hold, no leak', async () => {
    h = await createTestRuntime({ db: getDb().db, caps: CAPS, pollMs: 5_000 });
    const users = ['ann', 'ann', 'ann', 'bob', 'bob', 'cyd'];
    for (const [i, u] of users.entries()) await h.runtime.createTask(u, agent(30 + i));
    await h.advance(5_000);
    const before = h.runtime.poolSnapshot();
    expect(before).toMatchObject({ running: 2, queued: 4 });

    const first = poolActor(h);
    first.stop(); // a crash: no cleanup, its waiters and monitors are gone with it
    await h.settle();
    const second = poolActor(h);
    expect(second).not.toBe(first);
    expect(h.runtime.root.whichChildren().find((c) => c.id === 'runnerPool')?.restartCount).toBe(1);
    // Every runner holds again; the rows (and so the counts) never moved.
    const rows = await h.sessions();
    const runningIds = rows.filter((s) => s.status === 'running').map((s) => s.id);
    expect(h.runtime.poolSnapshot()).toMatchObject({ running: 2, queued: 4 });
    expect(holders(h)).toEqual(new Set(runningIds));

    // Crash it again while a grant is in flight (a run finishes, the next is granted).
    await h.advance(26_000);
    poolActor(h).stop();
    await h.settle();
    for (let i = 0; i < 10; i += 1) await h.advance(30_000);

    const done = await h.sessions();
    expect(done.map((s) => s.status)).toEqual(users.map(() => 'succeeded'));
    expect(await peakRunning(h, done)).toEqual({ total: 2, perUser: 1 });
    expect(h.runtime.poolSnapshot()).toMatchObject({ running: 0, queued: 0 });
    for (const s of done) expect(h.execLog(s.id)).toHaveLength(1);
    expect(h.errors).toEqual([]);
  });

  test('a task submitted in the same turn as the crash is picked up by the new pool', async () => {
    h = await createTestRuntime({ db: getDb().db, caps: CAPS, pollMs: 5_000 });
    await h.runtime.createTask('ann', agent(20));
    await h.settle();
    poolActor(h).stop();
    const late = await h.runtime.createTask('bob', agent(20));
    await h.advance(60_000);
    const rows = await h.sessions();
    expect(rows.find((s) => s.id === late.sessionId)?.status).toBe('succeeded');
    expect(rows.map((s) => s.status)).toEqual(['succeeded', 'succeeded']);
    expect(h.runtime.poolSnapshot()).toMatchObject({ running: 0, queued: 0 });
    expect(h.errors).toEqual([]);
  });

  test("a holder's DOWN with no restart releases its slot in the next tick: the run fails as runner_lost, queued again, the next is granted", async () => {
    h = await createTestRuntime({ db: getDb().db, caps: { maxRunning: 1, defaultUserCap: 1 } });
    const ann = await h.runtime.createTask('ann', agent(600));
    const bob = await h.runtime.createTask('bob', agent(600));
    await h.advance(1_000);
    expect(holders(h)).toEqual(new Set([ann.sessionId]));
    const runners = h.runtime.root.childSupervisor('taskRunners');
    if (runners === undefined) throw new Error('no runners');
    // Stopped by its supervisor: no restart, no clean release from the runner itself.
    await runners.terminateChild(ann.sessionId);
    await h.settle();
    const rows = await h.sessions();
    expect(rows.find((s) => s.id === ann.sessionId)).toMatchObject({
      status: 'failed',
      failureReason: 'runner_lost',
      userRecoverable: true,
    });
    expect(rows.find((s) => s.id === bob.sessionId)?.status).toBe('running');
    // ann's work is queued again (attempt 2) and its old service is gone.
    expect(rows.find((s) => s.taskId === ann.taskId && s.attempt === 2)?.status).toBe('queued');
    expect(h.cluster.serviceOf(ann.sessionId)).toBeUndefined();
    expect(holders(h)).toEqual(new Set([bob.sessionId]));
    expect(h.errors).toEqual([]);
  });
});
