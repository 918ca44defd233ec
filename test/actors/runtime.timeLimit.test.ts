/**
 * A task's time limit (`CreateTaskInput.timeLimitMs`) on a runtime over the
 * simulated cluster and a virtual clock: a run past it is failed as
 * `timed_out` with its output so far, its container goes, and its slot goes
 * to the next in line; a run inside it is untouched; a run adopted after a
 * deploy keeps counting from its grant, not from the adoption; a retry has
 * the same limit; a run its holder does not time out (a node from before
 * time limits, in a rolling deploy) is taken by another node's Reconciler
 * past the grace and timed out there. Every node's board says until when a
 * running card may go.
 */
import { sql } from 'kysely';
import { expect, test } from 'vitest';
import { createTestRuntime, type TestRuntime } from '../../src/testing/index.js';
import { describeEachEngine } from '../support/databases.js';
import { advanceAll, bootBeside, nodesOfEachTest } from '../support/multiNode.js';

const nodes = nodesOfEachTest();

const agent = (seconds: number, timeLimitMs?: number) => ({
  title: `agent ${seconds}s`,
  image: 'runner:v1',
  command: ['agent', String(seconds)],
  ...(timeLimitMs === undefined ? {} : { timeLimitMs }),
});

describeEachEngine('runtime: time limits', (getDb) => {
  /**
   * At 30 s into a run with a 60 s limit: still running a second before the
   * limit, failed as timed_out and its container gone a second after.
   */
  const timesOutAt60s = async (t: TestRuntime, sessionId: string) => {
    await t.advance(29_000);
    expect((await t.sessions()).find((s) => s.id === sessionId)?.status).toBe('running');
    await t.advance(2_000);
    expect((await t.sessions()).find((s) => s.id === sessionId)).toMatchObject({
      status: 'failed',
      failureReason: 'timed_out',
    });
    expect(t.cluster.serviceOf(sessionId)).toBeUndefined();
  };

  /** A runtime of one runner for `body`, closed after it whatever happens. */
  const withRuntime = async (body: (t: TestRuntime) => Promise<void>) => {
    const t = await createTestRuntime({
      db: getDb().db,
      caps: { maxRunning: 1, defaultUserCap: 1 },
      pollMs: 5_000,
    });
    try {
      await body(t);
      expect(t.errors).toEqual([]);
    } finally {
      await t.close();
    }
  };

  test('past its limit a run fails as timed_out with its output so far; its slot goes to the next', () =>
    withRuntime(async (t) => {
      const slow = await t.runtime.createTask('ann', agent(600, 60_000));
      const next = await t.runtime.createTask('ann', agent(5));
      await t.advance(59_000);
      expect((await t.sessions()).find((s) => s.id === slow.sessionId)?.status).toBe('running');
      expect(t.cluster.serviceOf(slow.sessionId)).toBeDefined();

      await t.advance(2_000);
      const rows = await t.sessions();
      const timedOut = rows.find((s) => s.id === slow.sessionId);
      expect(timedOut).toMatchObject({
        status: 'failed',
        failureReason: 'timed_out',
        exitCode: null,
        userRecoverable: false,
      });
      expect(rows.find((s) => s.id === next.sessionId)?.status).toBe('running');
      // The output it wrote before the limit is stored, and shown on its card.
      const { rows: out } = await sql<{ text: string }>`
        SELECT text FROM session_outputs WHERE session_id = ${slow.sessionId}`.execute(getDb().db);
      expect(out[0]?.text).toContain('[agent] reading the task description');
      const card = t.board().find((c) => c.sessionId === slow.sessionId);
      expect(card?.status).toBe('failed');
      expect(t.runtime.metrics().giveUpsTotal).toEqual({ timed_out: 1 });
      // Its container is gone; the next run's is there.
      expect(t.cluster.serviceOf(slow.sessionId)).toBeUndefined();
      expect(t.cluster.serviceOf(next.sessionId)).toBeDefined();
      await t.advance(10_000);
      expect((await t.sessions()).find((s) => s.id === next.sessionId)?.status).toBe('succeeded');
    }));

  test('a run inside its limit is untouched, and no limit is none', () =>
    withRuntime(async (t) => {
      const quick = await t.runtime.createTask('ann', agent(30, 60_000));
      await t.advance(31_000);
      const free = await t.runtime.createTask('ann', agent(120));
      await t.advance(125_000);
      const rows = await t.sessions();
      expect(rows.find((s) => s.id === quick.sessionId)?.status).toBe('succeeded');
      expect(rows.find((s) => s.id === free.sessionId)?.status).toBe('succeeded');
    }));

  test('adopted after a deploy, a run keeps counting from its grant; a retry has the same limit', () =>
    withRuntime(async (t) => {
      const slow = await t.runtime.createTask('ann', agent(600, 60_000));
      await t.advance(30_000);
      await t.deploy();
      expect(t.runtime.liveRunners()).toEqual([slow.sessionId]);
      await timesOutAt60s(t, slow.sessionId);

      // The retry's attempt is granted now and times out a limit later.
      const retried = await t.runtime.retry(null, slow.taskId);
      await t.advance(59_000);
      const second = (await t.sessions()).find((s) => s.id === retried.sessionId);
      expect(second?.status).toBe('running');
      await t.advance(2_000);
      expect((await t.sessions()).find((s) => s.id === retried.sessionId)).toMatchObject({
        status: 'failed',
        failureReason: 'timed_out',
        attempt: 2,
      });
    }));

  test('a runner that crashed and restarted reads its limit and keeps counting from the grant', () =>
    withRuntime(async (t) => {
      const slow = await t.runtime.createTask('ann', agent(600, 60_000));
      await t.advance(30_000);
      const runners = t.runtime.root.childSupervisor('taskRunners');
      if (runners === undefined) throw new Error('no runners');
      // Killed: its transient supervisor restarts it; the new incarnation was
      // told no limit by any grant or fence, and adopts its own run.
      await runners.exitChild(slow.sessionId, 'kill');
      await t.settle();
      expect(t.runtime.liveRunners()).toEqual([slow.sessionId]);
      await timesOutAt60s(t, slow.sessionId);
    }));

  test("a node's defaultTimeLimitMs bounds a task submitted without a limit; a task's own wins", async () => {
    const t = await createTestRuntime({
      db: getDb().db,
      caps: { maxRunning: 2, defaultUserCap: 2 },
      defaultTimeLimitMs: 60_000,
    });
    try {
      const bare = await t.runtime.createTask('ann', agent(600));
      const own = await t.runtime.createTask('ann', agent(600, 120_000));
      await t.advance(61_000);
      let rows = await t.sessions();
      expect(rows.find((s) => s.id === bare.sessionId)).toMatchObject({
        status: 'failed',
        failureReason: 'timed_out',
      });
      expect(rows.find((s) => s.id === own.sessionId)?.status).toBe('running');
      expect((await t.runtime.taskDetail(null, bare.taskId))?.timeLimitMs).toBe(60_000);
      await t.advance(60_000);
      rows = await t.sessions();
      expect(rows.find((s) => s.id === own.sessionId)?.failureReason).toBe('timed_out');
      expect(t.errors).toEqual([]);
    } finally {
      await t.close();
    }
  });

  /**
   * Two nodes on the test's store, one cluster and one clock: A (the
   * harness, `nodes.h`) runs everything; B (`localMax` 0, with `b`'s
   * options) runs nothing of its own. B's reports land in `errors`.
   */
  const twoNodes = async (bOptions: {
    defaultTimeLimitMs?: number;
    ioTimeoutMs?: number;
    storeDeadlineMs?: number;
  }) => {
    nodes.h = await createTestRuntime({
      db: getDb().db,
      nodeId: 'nodeA',
      caps: { maxRunning: 2, defaultUserCap: 2 },
    });
    const { runtime: b, errors } = await bootBeside(nodes, nodes.h, {
      db: getDb().db,
      caps: { maxRunning: 2, defaultUserCap: 2 },
      localMax: 0,
      ...bOptions,
      nodeId: 'nodeB',
      bootId: 'b1',
    });
    return { h: nodes.h, a: nodes.h.runtime, b, errors };
  };

  test('two nodes: a limit is on the task, so the node that runs it enforces what the submitting node set', async () => {
    // A runs everything; B takes submissions only (localMax 0) and has a default limit.
    const { h, a, b, errors } = await twoNodes({ defaultTimeLimitMs: 60_000 });
    const viaB = await b.createTask('ann', agent(600));
    const viaA = await a.createTask('ann', agent(90));
    await advanceAll(h, [a, b], 1_000);
    expect(new Set(a.liveRunners())).toEqual(new Set([viaB.sessionId, viaA.sessionId]));
    // Both boards say until when each run may go: B's from the change feed, A's from its grants.
    const granted = new Map((await h.sessions()).map((s) => [s.id, s.claimedAt?.getTime()]));
    const limitOf = (s: { sessionId: string }) => granted.get(s.sessionId)! + 60_000;
    for (const node of [a, b]) {
      const cards = new Map(node.cards(null).map((c) => [c.sessionId, c]));
      expect(cards.get(viaB.sessionId)).toMatchObject({
        timeLimitMs: 60_000,
        running: { until: new Date(limitOf(viaB)).toISOString() },
      });
      expect(cards.get(viaA.sessionId)).toMatchObject({
        timeLimitMs: null,
        running: { until: null },
      });
    }
    await advanceAll(h, [a, b], 60_000);
    const rows = await h.sessions();
    // B's default, written on the task, is what A enforced; A's own submission has none.
    expect(rows.find((s) => s.id === viaB.sessionId)).toMatchObject({
      status: 'failed',
      failureReason: 'timed_out',
      owner: expect.stringMatching(/^nodeA@/),
    });
    expect(rows.find((s) => s.id === viaA.sessionId)?.status).toBe('running');
    await advanceAll(h, [a, b], 30_000);
    expect((await h.sessions()).find((s) => s.id === viaA.sessionId)?.status).toBe('succeeded');
    expect([...h.errors, ...errors]).toEqual([]);
  });

  test("two nodes: a run whose holder does not time it out is taken past the grace by the other node's Reconciler and timed out there", async () => {
    // A runs everything; B takes no runs of its own (localMax 0) but
    // reconciles, and leaves a run past its limit to its owner for its own
    // container and store deadlines (overdueGraceMs): 30 s + 30 s here.
    const OVERDUE_GRACE_MS = 60_000;
    const { h, a, b, errors } = await twoNodes({ ioTimeoutMs: 30_000, storeDeadlineMs: 30_000 });
    const slow = await a.createTask('ann', agent(3_600));
    await advanceAll(h, [a, b], 1_000);
    expect(a.liveRunners()).toEqual([slow.sessionId]);
    // A node from before time limits: its runner was told of none. The task
    // has one now, as a newer node would have written it at submission.
    await sql`UPDATE tasks SET time_limit_ms = 60000 WHERE id = ${slow.taskId}`.execute(getDb().db);

    // A does not time it out; B leaves it to A for the grace.
    await advanceAll(h, [a, b], 60_000 + OVERDUE_GRACE_MS - 2_000);
    expect((await h.sessions()).find((s) => s.id === slow.sessionId)).toMatchObject({
      status: 'running',
      owner: expect.stringMatching(/^nodeA@/),
    });
    // Past it, B's next pass (a Reconciler period at most) takes it and times it out.
    await advanceAll(h, [a, b], 2_000 + 60_000);
    expect((await h.sessions()).find((s) => s.id === slow.sessionId)).toMatchObject({
      status: 'failed',
      failureReason: 'timed_out',
      owner: 'nodeB@b1',
    });
    const { rows: out } = await sql<{ text: string }>`
      SELECT text FROM session_outputs WHERE session_id = ${slow.sessionId}`.execute(getDb().db);
    expect(out[0]?.text).toContain('[agent] reading the task description');
    expect(h.cluster.serviceOf(slow.sessionId)).toBeUndefined();
    // A's runner is stopped (fenced out at its next beat) and holds no slot.
    await advanceAll(h, [a, b], 30_000);
    expect(a.liveRunners()).toEqual([]);
    expect(b.liveRunners()).toEqual([]);
    expect(b.metrics().giveUpsTotal).toEqual({ timed_out: 1 });
    expect(errors).toEqual([
      expect.objectContaining({
        code: 'OVERDUE_RUN_TAKEN',
        message: expect.stringContaining('more than 1m past its time limit (1m)'),
      }),
    ]);
    expect(h.errors.map((e) => (e as { code?: string }).code)).toEqual(['RUNNER_FENCED_OUT']);
  });

  test('a limit out of bounds is refused at submit', () =>
    withRuntime(async (t) => {
      await expect(t.runtime.createTask('ann', agent(5, 999))).rejects.toMatchObject({
        code: 'invalid',
      });
      expect(await t.sessions()).toEqual([]);
    }));
});
