/**
 * An application's vitest suite on `roundtable/testing`: a whole runtime on
 * an in-memory PGlite, a simulated Swarm and a virtual clock, so a
 * ten-minute build, a deploy and a rescheduled container take milliseconds.
 */
import { createTestRuntime, migratedPglite, type TestRuntime } from 'roundtable/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildStatus, queueBuild } from './builds.js';

// One PGlite for the file, each test's harness emptying it first. From
// roundtable/testing, not @electric-sql/pglite: the app does not depend on
// PGlite itself (a strict install, pnpm's or npm's nested, does not let it
// import roundtable's dependencies), and `migratedPglite` loads a migrated
// template (about a second) where a fresh initdb takes seconds, past
// vitest's default 10 s hook timeout on a busy machine.
let pglite: Awaited<ReturnType<typeof migratedPglite>>;
beforeAll(async () => {
  pglite = await migratedPglite();
}, 60_000);
afterAll(() => pglite.close());

let h: TestRuntime | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const card = (taskId: string) => h?.board().find((c) => c.taskId === taskId);

// Virtual time, but a whole runtime's real work: a few seconds a test on a
// busy machine, near vitest's default 5 s.
describe('builds, as the app runs them', { timeout: 30_000 }, () => {
  it('a build running through a deploy of the app is adopted and finishes once', async () => {
    h = await createTestRuntime({ pglite, pollMs: 5_000 });
    const taskId = await queueBuild(h.runtime, 'ann', 'shop');
    await h.advance(60_000);
    expect(buildStatus(card(taskId))).toBe('running');
    await h.deploy(); // the app is replaced; the build's container keeps going
    await h.advance(600_000);
    expect(buildStatus(card(taskId))).toBe('built');
    const sessionId = card(taskId)?.sessionId ?? '';
    expect(h.execLog(sessionId)).toHaveLength(1); // never ran twice
  });

  it('a build whose container Swarm moves during a deploy runs again and finishes', async () => {
    h = await createTestRuntime({ pglite, pollMs: 5_000 });
    const taskId = await queueBuild(h.runtime, 'ann', 'shop');
    await h.advance(60_000);
    const first = card(taskId)?.sessionId ?? '';
    await h.deploy();
    h.cluster.reschedule(first); // the container is replaced while nobody owns the run
    await h.advance(5_000); // one poll: the new boot sees the container was replaced
    expect(buildStatus(card(taskId))).toBe('running again (attempt 2)');
    await h.advance(700_000);
    expect(buildStatus(card(taskId))).toBe('built');
  });

  it('a user over their cap waits in line with a position', async () => {
    h = await createTestRuntime({ pglite, caps: { maxRunning: 4, defaultUserCap: 1 } });
    await queueBuild(h.runtime, 'ann', 'one');
    const second = await queueBuild(h.runtime, 'ann', 'two');
    await h.settle();
    expect(buildStatus(card(second))).toBe('waiting, 1 in line');
  });
});
