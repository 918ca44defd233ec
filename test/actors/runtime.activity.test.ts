/**
 * The dashboard's series through the runtime (GET /api/admin/activity's
 * source): two nodes on one database, one virtual clock, each running its
 * own users' work, answer the same cluster-wide series, taken up to their
 * own clock's now. The series' arithmetic is tested row by row in
 * test/db/activitySeries.test.ts.
 */
import { afterEach, expect, test } from 'vitest';
import { createRuntime } from '../../src/actors/runtime.js';
import type { Runtime } from '../../src/actors/runtimeTypes.js';
import { SimulatedBackend } from '../../src/containers/simulated/SimulatedBackend.js';
import { createTestRuntime, type TestRuntime } from '../../src/testing/index.js';
import { describeEachEngine } from '../support/databases.js';
import { advanceAll, killAll, settleAll } from '../support/multiNode.js';

let h: TestRuntime | undefined;
const others: Runtime[] = [];
afterEach(async () => {
  await killAll(others.splice(0));
  await h?.close();
  h = undefined;
});

const agent = (seconds: number) => ({
  title: 'work',
  image: 'runner:v1',
  command: ['agent', String(seconds)],
});
const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);

describeEachEngine('runtime: the dashboard series', (getDb) => {
  test('two nodes on one database answer the same series, up to their clock’s now', async () => {
    h = await createTestRuntime({
      db: getDb().db,
      nodeId: 'nodeA',
      caps: { maxRunning: 4, defaultUserCap: 2 },
    });
    const a = h.runtime;
    const b = await createRuntime({
      db: getDb().db,
      backend: new SimulatedBackend(h.cluster),
      clock: h.clock,
      caps: { maxRunning: 4, defaultUserCap: 2 },
      nodeId: 'nodeB',
      bootId: 'b1',
      onError: () => {},
    });
    others.push(b);
    const both = [a, b];
    await settleAll(both);
    // Each user's cap is 2: two of each run, one of each waits.
    for (let i = 0; i < 3; i += 1) await a.createTask('ann', agent(90));
    for (let i = 0; i < 3; i += 1) await b.createTask('bob', agent(90));
    await advanceAll(h, both, 30_000);
    const early = await a.activity({ minutes: 5 });
    expect(await b.activity({ minutes: 5 })).toEqual(early);
    expect(early.t).toHaveLength(5);
    expect([early.queued.at(-1), early.running.at(-1)]).toEqual([2, 4]);
    expect(sum(early.succeeded) + sum(early.failed)).toBe(0);

    // The first four end at 90 s; the two that waited run next.
    await advanceAll(h, both, 90_000);
    const later = await a.activity({ minutes: 5 });
    expect(await b.activity({ minutes: 5 })).toEqual(later);
    expect([later.queued.at(-1), later.running.at(-1), sum(later.succeeded)]).toEqual([0, 2, 4]);
    // The two that waited for a run to end waited about 90 s.
    const waits = later.waitP95.filter((w): w is number => w !== null);
    expect(Math.max(...waits)).toBeGreaterThanOrEqual(85);
    expect(Math.max(...waits)).toBeLessThanOrEqual(95);
    // A window that ends before anything was submitted is empty.
    const before = await a.activity({ minutes: 1, at: new Date(h.clock.now() - 600_000) });
    expect([before.queued, before.running]).toEqual([[0], [0]]);
  });
});
