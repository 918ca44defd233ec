/**
 * End to end on the local backend, as a newcomer gets it: the bundled CLI
 * with no backend named and no Docker engine (so `auto` picks local
 * processes), a real command created over HTTP, the node SIGKILLed while it
 * runs, a second start that adopts the run, and the run finishing from its
 * marker with its whole output, having run once (it counts its own starts
 * in a file). Then a run whose pid another process took while the node was
 * down: `container_replaced`, the other process left alone.
 *
 * On Postgres, not PGlite: the test reads the rows while the node runs, to
 * SIGKILL it only once the run's handle is recorded (a crash before that is
 * an orphan with no handle, failed and re-queued by design). Skipped without
 * ROUNDTABLE_TEST_DATABASE_URL, failed with CI=true.
 *
 * Real time, because these are real processes: every wait is bounded.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parseLocalHandle } from '../../src/containers/local/localHandle.js';
import {
  canChoosePids,
  isAlive,
  killRunsUnder,
  killStrays,
  spawnWithPid,
  until,
} from '../containers/local/localFixture.js';
import type { CliProcess } from './cliProcess.js';
import {
  adoptedRunSucceeds,
  countsItsStarts,
  createTaskOver,
  describeWithServer,
  E2eCluster,
  type E2eNode,
  SERVER,
  STOP_MS,
  serverSkipNote,
  serverUnlessSkipped,
  transition,
  UP_MS,
} from './e2eCluster.js';

let cluster: E2eCluster;
let node: E2eNode;

/** Waits until the session row records its handle: from then on a crash leaves an adoptable run. */
function handleRecorded(sessionId: string): Promise<string> {
  return until(async () => {
    const rows = await cluster.query<{ handle: string | null }>(
      'SELECT handle FROM sessions WHERE id = $1',
      [sessionId],
    );
    return rows[0]?.handle ?? undefined;
  }, 30_000);
}
const strays: number[] = [];

function startNode(): CliProcess {
  // No DOCKER_HOST (cleanEnv drops it) and one that cannot answer: auto must pick local.
  return cluster.start(node, { DOCKER_HOST: `unix://${join(cluster.dir, 'no-docker.sock')}` });
}

const createTask = async (title: string, command: string[]) =>
  createTaskOver(node, 'ann', { title, image: 'alpine:3.20', command });

/** The run's directory under the data directory, once it has one. */
const runDir = (sessionId: string) => join(node.dataDir, 'runs', 'default', sessionId);

beforeAll(async () => {
  const server = serverUnlessSkipped();
  if (server === undefined) return;
  cluster = await E2eCluster.create(server, 'rt_local_e2e');
  node = await cluster.addNode('local-e2e', {
    caps: { maxRunning: 4, defaultUserCap: 4 },
    pollMs: 200,
  });
});

afterAll(async () => {
  if (cluster === undefined) return;
  for (const p of cluster.processes) await p.kill();
  killStrays(strays);
  killRunsUnder(node.dataDir);
  await cluster.close(SERVER ?? '');
});

describeWithServer(
  `roundtable start on local processes, SIGKILLed mid-run and started again${serverSkipNote}`,
  () => {
    it('adopts the run, which finishes from its marker with its whole output, having run once', async () => {
      const first = startNode();
      const ready = await first.waitFor((r) => r.msg === 'ready', UP_MS, 'ready record');
      expect(ready.backend).toMatchObject({
        name: 'local',
        reason: expect.stringMatching(/^auto: no Docker engine answered/),
      });
      const health = (await (await fetch(`${node.baseUrl}/healthz`)).json()) as {
        backend?: { name: string };
      };
      expect(health.backend?.name).toBe('local');

      const gate = join(cluster.dir, 'go');
      const starts = join(cluster.dir, 'starts');
      // Counts its own starts, then waits for the gate: it is mid-run when the node dies.
      const task = await createTask('counts itself', countsItsStarts(starts, gate));
      await first.waitFor(transition('running', task.taskId), 30_000, 'the run started');
      await until(() => (existsSync(starts) ? true : undefined), 30_000);
      expect(await handleRecorded(task.sessionId)).toMatch(
        /^rt-ses_\w+:\d+\.\d+\.[0-9a-f]+@[\w-]+$/,
      );
      first.signal('SIGKILL');
      await first.exitCode(STOP_MS);

      // The node is gone; the run is not.
      const second = startNode();
      await second.waitFor((r) => r.msg === 'ready', UP_MS, 'second ready record');
      writeFileSync(gate, '');
      await adoptedRunSucceeds(second, task.taskId);

      expect(readFileSync(starts, 'utf8')).toBe('start\n');
      expect(existsSync(runDir(task.sessionId))).toBe(false);
      const sessions = await cluster.query<{ id: string; status: string; backend: string }>(
        'SELECT id, status, backend FROM sessions WHERE task_id = $1',
        [task.taskId],
      );
      expect(sessions).toEqual([{ id: task.sessionId, status: 'succeeded', backend: 'local' }]);
      const output = await cluster.query<{ text: string }>(
        'SELECT text FROM session_outputs WHERE session_id = $1',
        [task.sessionId],
      );
      expect(output[0]?.text).toBe('step 1\nstep 2\n');
    }, 300_000);

    it.runIf(canChoosePids())(
      'a run whose pid another process took while the node was down is replaced, never adopted (root)',
      async () => {
        const first = startNode();
        await first.waitFor((r) => r.msg === 'ready', UP_MS, 'ready record');
        const task = await createTask('dies while the node is down', [
          'sh',
          '-c',
          'echo up; sleep 600',
        ]);
        await first.waitFor(transition('running', task.taskId), 30_000, 'the run started');
        // The wrapper, leader of the run's process group, as the row names it.
        const pid = parseLocalHandle(await handleRecorded(task.sessionId))?.pid ?? 0;
        expect(pid).toBeGreaterThan(0);
        first.signal('SIGKILL');
        await first.exitCode(STOP_MS);
        // The run dies without a marker, and the kernel gives its pid to another process.
        process.kill(-pid, 'SIGKILL');
        await until(() => (isAlive(-pid) ? undefined : true), 10_000);
        // On a busy machine another process may fork first and take the pid
        // (a Postgres backend did once): a reuse by the kernel all the same,
        // but not ours to watch.
        const reused = await spawnWithPid(pid, strays);
        if (reused === null && !isAlive(pid)) throw new Error(`could not reuse pid ${pid}`);

        const second = startNode();
        await second.waitFor((r) => r.msg === 'ready', UP_MS, 'second ready record');
        const given = await until(async () => {
          const rows = await cluster.query<{ id: string; failure_reason: string | null }>(
            "SELECT id, failure_reason FROM sessions WHERE task_id = $1 AND status = 'failed'",
            [task.taskId],
          );
          return rows[0];
        }, 60_000);
        expect(given).toEqual({ id: task.sessionId, failure_reason: 'container_replaced' });
        // The process that got the pid is not the run's: nothing signalled it
        // (ours, the `sleep`, is still there; another's may end on its own).
        if (reused === pid) expect(isAlive(pid)).toBe(true);
        second.signal('SIGINT');
        expect(await second.exitCode(STOP_MS)).toBe(0);
      },
      300_000,
    );
  },
);
