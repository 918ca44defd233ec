/**
 * The runtime end to end on a real Docker Swarm engine (issues 6 and 7):
 * PGlite in memory, the SwarmBackend, the real clock. The harness scenarios
 * in runtime.scenarios.test.ts prove the same things on the simulated
 * cluster; this file proves the simulation did not flatter the real engine,
 * and that a second live node can take a run its holder lets pass its time
 * limit and time it out (src/actors/overdueRuns.ts).
 *
 * Without an engine the suite is reported skipped with the reason in its
 * title; with CI=true a missing engine is a failure.
 */
import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { DbHandle } from '../../src/db/connect.js';
import { type Db, listSessionEvents } from '../../src/db/index.js';
import { detectEngine, RUNNER_IMAGE } from '../containers/docker/engine.js';
import {
  bootNode,
  killTaskContainer,
  openStore,
  POLL_MS,
  type SwarmNode,
  sessionsOf,
  swarmBackend,
  sweepServices,
  truncateAll,
  waitFor,
  waitForSession,
} from './runtime.swarmHarness.js';

const engine = await detectEngine({ swarm: true });
const TITLE = 'runtime on a real Swarm engine';

const task = (title: string, script: string) => ({
  title,
  image: RUNNER_IMAGE,
  command: ['sh', '-c', script],
});
const finished = (s: { status: string }) => s.status !== 'queued' && s.status !== 'running';

if (engine.ok) {
  const { docker } = engine;
  const backend = swarmBackend();
  let store: DbHandle;
  let db: Db;
  const nodes: SwarmNode[] = [];
  const boot = async (options?: Parameters<typeof bootNode>[1]) => {
    const node = await bootNode(db, options);
    nodes.push(node);
    return node;
  };
  const handles = async () => (await backend.listHandles()).map((r) => r.handle);
  const cardOf = (node: SwarmNode, taskId: string) =>
    node.runtime.cards(null).find((c) => c.taskId === taskId);

  beforeAll(async () => {
    store = await openStore();
    db = store.db;
  });
  afterAll(async () => {
    await store?.close();
  });
  beforeEach(async () => {
    await truncateAll(db);
  });
  afterEach(async () => {
    // Stop the runners first, so nothing creates a service behind the sweep.
    for (const node of nodes.splice(0)) await node.stop();
    await sweepServices(docker);
  });

  describe(TITLE, () => {
    it('runs a task in a Swarm service: whole output and exit code, then removes the service', async () => {
      const node = await boot();
      const { taskId, sessionId } = await node.runtime.createTask(
        'alice',
        task('hello', 'echo hello; echo to-stderr >&2; printf "no newline"'),
      );
      const s = await waitForSession(db, taskId, 'attempt 1 finished', finished);
      expect(s).toMatchObject({
        id: sessionId,
        status: 'succeeded',
        exitCode: 0,
        backend: 'swarm',
        handle: `rt-${sessionId}`,
        attempt: 1,
        owner: node.runtime.owner,
      });
      const out = await waitFor('the runner ended', () => node.outputs.get(sessionId));
      expect(out).toEqual({ exitCode: 0, output: 'hello\nto-stderr\nno newline' });
      expect(cardOf(node, taskId)).toMatchObject({
        column: 'done',
        exitCode: 0,
        lastOutput: ['hello', 'to-stderr', 'no newline'],
      });
      await waitFor('service removed', async () => !(await handles()).includes(`rt-${sessionId}`));
      expect(node.errors).toEqual([]);
    });

    it('a non-zero exit fails the session with its exit code, not recoverable, not re-queued', async () => {
      const node = await boot();
      const { taskId, sessionId } = await node.runtime.createTask(
        'alice',
        task('fails', 'echo about to fail; exit 3'),
      );
      const s = await waitForSession(db, taskId, 'attempt 1 finished', finished);
      expect(s).toMatchObject({
        id: sessionId,
        status: 'failed',
        exitCode: 3,
        failureReason: 'exit_code',
        userRecoverable: false,
      });
      expect(await waitFor('the runner ended', () => node.outputs.get(sessionId))).toEqual({
        exitCode: 3,
        output: 'about to fail\n',
      });
      await waitFor('runner gone', () => !node.runtime.liveRunners().includes(sessionId));
      expect((await sessionsOf(db, taskId)).map((r) => r.attempt)).toEqual([1]);
      expect(cardOf(node, taskId)).toMatchObject({
        column: 'failed',
        exitCode: 3,
        failure: { reason: 'exit_code', recoverable: false },
      });
      expect(node.errors).toEqual([]);
    });

    it('deploy mid-run: the next boot adopts the run and finishes it from the marker, run once', async () => {
      const first = await boot();
      const { taskId, sessionId } = await first.runtime.createTask(
        'alice',
        task(
          'survives',
          // Appends to a file in the container: a second execution would count 2.
          'echo run >> /tmp/rt-runs; echo start; sleep 3; echo "runs=$(wc -l < /tmp/rt-runs)"; echo done',
        ),
      );
      await waitFor('output streamed', () => cardOf(first, taskId)?.lastOutput.includes('start'));
      first.kill();
      const running = (await sessionsOf(db, taskId))[0];
      expect(running).toMatchObject({ status: 'running', owner: first.runtime.owner });
      // Killed mid-run: the command has not written its marker yet.
      expect((await backend.observe({ sessionId, handle: `rt-${sessionId}` })).marker).toBeNull();

      const second = await boot();
      const s = await waitForSession(db, taskId, 'adopted run finished', finished);
      expect(s).toMatchObject({
        id: sessionId,
        status: 'succeeded',
        exitCode: 0,
        owner: second.runtime.owner,
        startedAt: running?.startedAt,
      });
      expect(s.epoch).toBeGreaterThan(running?.epoch ?? Number.POSITIVE_INFINITY);
      const events = await listSessionEvents(db, sessionId);
      expect(events.filter((e) => e.reason === 'adopted').map((e) => e.node)).toEqual([
        second.runtime.owner,
      ]);
      expect(await waitFor('the runner ended', () => second.outputs.get(sessionId))).toEqual({
        exitCode: 0,
        output: 'start\nruns=1\ndone\n',
      });
      expect(first.outputs.size).toBe(0);
      expect(cardOf(second, taskId)).toMatchObject({
        column: 'done',
        exitCode: 0,
        lastOutput: ['start', 'runs=1', 'done'],
      });
      await waitFor('service removed', async () => !(await handles()).includes(`rt-${sessionId}`));
      expect([...first.errors, ...second.errors]).toEqual([]);
    });

    it('the 18-hour card: deploy, container killed, container_replaced on the first poll, attempt 2 completes', async () => {
      const first = await boot();
      const { taskId, sessionId } = await first.runtime.createTask(
        'alice',
        task('rescheduled', 'echo start; sleep 6; echo done'),
      );
      await waitFor('output streamed', () => cardOf(first, taskId)?.lastOutput.includes('start'));
      first.kill();
      expect((await backend.observe({ sessionId, handle: `rt-${sessionId}` })).marker).toBeNull();

      // A budget far beyond the test: only the start-time evidence can end this adoption.
      const second = await boot({ adoptBudgetMs: 10 * 60_000 });
      await waitFor('adopted', async () =>
        (await listSessionEvents(db, sessionId)).some((e) => e.reason === 'adopted'),
      );
      const { replacement } = await killTaskContainer(docker, `rt-${sessionId}`);

      const failed = await waitFor('attempt 1 failed', async () => {
        const one = (await sessionsOf(db, taskId))[0];
        return one && finished(one) ? one : undefined;
      });
      expect(failed).toMatchObject({
        status: 'failed',
        failureReason: 'container_replaced',
        userRecoverable: true,
        owner: second.runtime.owner,
      });
      // The first observation of the new container decides; one poll plus the
      // engine calls of one observation, never anything near the budget.
      const lag = (failed.finishedAt?.getTime() ?? Number.NaN) - replacement.startedAt.getTime();
      expect(lag, `decided ${lag} ms after the new container started`).toBeGreaterThanOrEqual(0);
      expect(lag, `decided ${lag} ms after the new container started`).toBeLessThan(
        POLL_MS + 3_000,
      );

      const retry = await waitForSession(
        db,
        taskId,
        'attempt 2 finished',
        (r) => r.attempt === 2 && finished(r),
        20_000,
      );
      expect(retry).toMatchObject({ status: 'succeeded', exitCode: 0, attempt: 2 });
      expect(await waitFor('attempt 2 ended', () => second.outputs.get(retry.id))).toEqual({
        exitCode: 0,
        output: 'start\ndone\n',
      });
      expect(cardOf(second, taskId)).toMatchObject({ column: 'done', attempt: 2 });
      expect(second.runtime.metrics().giveUpsTotal).toEqual({ container_replaced: 1 });
      await waitFor('services removed', async () => {
        const left = await handles();
        return !left.includes(`rt-${sessionId}`) && !left.includes(`rt-${retry.id}`);
      });
      expect([...first.errors, ...second.errors]).toEqual([]);
    });

    it('a run its live holder does not time out (a node from before time limits) is taken by a second node past the grace and timed out there', {
      timeout: 90_000,
    }, async () => {
      // A beats every second (a third of its Reconciler period), so the
      // sweep after each beat stops a runner fenced out of its run soon.
      const a = await boot({ node: { reconcileMs: 3_000 } });
      // B, another machine (its own nodeId: not a later boot of A's), runs
      // nothing of its own and reconciles every second; it leaves a run past
      // its limit to its holder for its own deadlines (5 s + 1 s).
      const b = await boot({
        node: {
          nodeId: 'swarm-test-b',
          localMax: 0,
          reconcileMs: 1_000,
          ioTimeoutMs: 5_000,
          storeDeadlineMs: 1_000,
        },
      });
      const { taskId, sessionId } = await a.runtime.createTask(
        'alice',
        task('hangs', 'echo started; sleep 600'),
      );
      const running = await waitForSession(
        db,
        taskId,
        'attempt 1 running in its service',
        (s) => s.status === 'running' && s.handle !== null,
      );
      // A stands for a node from before time limits: its runner was told of
      // none. The task has one now, as a newer node wrote it at submission.
      await sql`UPDATE tasks SET time_limit_ms = 1000 WHERE id = ${taskId}`.execute(db);
      // Inside the grace the run is A's: still running, A's epoch.
      await new Promise((r) => setTimeout(r, 3_000));
      expect((await sessionsOf(db, taskId)).at(-1)).toMatchObject({
        status: 'running',
        owner: running.owner,
        epoch: running.epoch,
      });
      const s = await waitForSession(db, taskId, 'timed out by B', finished, 40_000);
      expect(s).toMatchObject({
        id: sessionId,
        status: 'failed',
        failureReason: 'timed_out',
        owner: expect.stringMatching(/^swarm-test-b@boot/),
      });
      expect(s.epoch).toBe(running.epoch + 1);
      // B read what the run printed before it removed the service.
      const { rows } = await sql<{ text: string }>`
        SELECT text FROM session_outputs WHERE session_id = ${sessionId}`.execute(db);
      expect(rows[0]?.text).toContain('started');
      await waitFor('its service removed', async () =>
        (await handles()).includes(running.handle as string) ? undefined : true,
      );
      expect(b.errors).toEqual([expect.objectContaining({ code: 'OVERDUE_RUN_TAKEN', sessionId })]);
      // A's runner learns it lost the run at A's next beat and ends, its slot given back.
      await waitFor("A's runner gone", () => a.runtime.liveRunners().length === 0, 30_000);
      expect(a.errors).toEqual([expect.objectContaining({ code: 'RUNNER_FENCED_OUT', sessionId })]);
      expect(b.runtime.liveRunners()).toEqual([]);
    });

    it('cancelling a running task removes its service', async () => {
      const node = await boot();
      const { taskId, sessionId } = await node.runtime.createTask(
        'alice',
        task('cancelled', 'echo start; sleep 60'),
      );
      await waitFor('output streamed', () => cardOf(node, taskId)?.lastOutput.includes('start'));
      // Once in CI (2 Dec) the one service listed here was not this session's.
      // The attempts and errors say whether a second attempt had started, and why.
      const listed = await handles();
      const attempts = (await sessionsOf(db, taskId)).map(
        (s) => `${s.id} #${s.attempt} ${s.status} ${s.failureReason ?? ''}`,
      );
      expect(listed, JSON.stringify({ attempts, errors: node.errors.map(String) })).toContain(
        `rt-${sessionId}`,
      );
      await node.runtime.cancel(null, taskId);
      await waitFor('service removed', async () => !(await handles()).includes(`rt-${sessionId}`));
      expect((await sessionsOf(db, taskId)).map((r) => r.status)).toEqual(['cancelled']);
      await waitFor('runner gone', () => !node.runtime.liveRunners().includes(sessionId));
      expect(cardOf(node, taskId)).toMatchObject({ column: 'failed', status: 'cancelled' });
      expect(node.errors).toEqual([]);
    });
  });
} else if (process.env.CI === 'true') {
  describe(TITLE, () => {
    it('needs an engine under CI=true', () => {
      expect.fail(`CI=true but ${engine.reason}`);
    });
  });
} else {
  describe.skip(`${TITLE} skipped: ${engine.reason}`, () => {
    it('runs tasks, deploys, reschedules and cancels on Swarm', () => undefined);
  });
}
