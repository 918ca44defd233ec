/**
 * End to end on plain Docker containers (the CI engine): `roundtable start
 * --backend docker` runs a command in a container, the node is SIGKILLed
 * mid-run, started again on the same data directory, and adopts the
 * container, which finishes from its marker with its whole output, having
 * run once (it counts its own starts in the container, and the task has one
 * session).
 *
 * Needs DOCKER_HOST, the runner image (ROUNDTABLE_RUNNER_IMAGE) and the
 * Postgres server: skipped without them, failed with CI=true.
 * Real processes and containers, so real time: every wait is bounded.
 */
import type Docker from 'dockerode';
import { afterAll, describe, expect, it } from 'vitest';
import { namespaceFilter } from '../../src/containers/namespace.js';
import { detectEngine, RUNNER_IMAGE } from '../containers/docker/engine.js';
import { testNamespace } from '../containers/testNamespace.js';
import {
  adoptedRunSucceeds,
  createTaskOver,
  describeMissing,
  E2eCluster,
  missingForEngine,
  SERVER,
  STOP_MS,
  transition,
  until,
} from './e2eCluster.js';

const engine = await detectEngine({ swarm: false });
const missing = missingForEngine(engine);
const TITLE = 'roundtable start --backend docker, SIGKILLed mid-run and started again';
const GATE = '/tmp/rt-go';

async function removeContainers(docker: Docker, namespace: string): Promise<void> {
  const left = await docker.listContainers({
    all: true,
    filters: { label: namespaceFilter(namespace) },
  });
  for (const c of left) await docker.getContainer(c.Id).remove({ force: true });
}

if (missing === null && engine.ok) {
  const { docker } = engine;
  const namespace = testNamespace('dockerrestart');
  let cluster: E2eCluster | undefined;

  afterAll(async () => {
    try {
      await cluster?.close(SERVER ?? '');
    } finally {
      await removeContainers(docker, namespace);
    }
  });

  describe(TITLE, () => {
    it('adopts the container, which finishes from its marker with its whole output, having run once', async () => {
      const c = await E2eCluster.create(SERVER ?? '', 'rt_docker_e2e');
      cluster = c;
      const node = await c.addNode('docker-e2e', {
        backend: 'docker',
        dockerHost: process.env.DOCKER_HOST,
        namespace,
        caps: { maxRunning: 2, defaultUserCap: 2 },
        pollMs: 200,
      });
      const first = await c.startReady(node);
      const task = await createTaskOver(node, 'ann', {
        title: 'counts itself',
        image: RUNNER_IMAGE,
        command: [
          'sh',
          '-c',
          `echo run >> /tmp/rt-runs; echo start; i=0; while [ ! -e ${GATE} ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i+1)); done; echo "runs=$(wc -l < /tmp/rt-runs)"; echo done`,
        ],
      });
      await first.waitFor(transition('running', task.taskId), 60_000, 'the run started');
      const handle = await until(
        'the handle and start are recorded',
        async () => {
          const rows = await c.query<{ handle: string | null; started_at: Date | null }>(
            'SELECT handle, started_at FROM sessions WHERE id = $1',
            [task.sessionId],
          );
          return rows[0]?.handle && rows[0].started_at ? rows[0].handle : undefined;
        },
        60_000,
        200,
      );
      first.signal('SIGKILL');
      await first.exitCode(STOP_MS);
      const info = await docker.getContainer(handle).inspect();
      expect(info.State.Running).toBe(true);

      const second = await c.startReady(node);
      const exec = await docker
        .getContainer(handle)
        .exec({ Cmd: ['touch', GATE], AttachStdout: false, AttachStderr: false });
      await exec.start({ Detach: true });
      await adoptedRunSucceeds(second, task.taskId);

      const sessions = await c.query<{ id: string; status: string; backend: string }>(
        'SELECT id, status, backend FROM sessions WHERE task_id = $1',
        [task.taskId],
      );
      expect(sessions).toEqual([{ id: task.sessionId, status: 'succeeded', backend: 'docker' }]);
      const output = await c.query<{ text: string }>(
        'SELECT text FROM session_outputs WHERE session_id = $1',
        [task.sessionId],
      );
      expect(output[0]?.text).toBe('start\nruns=1\ndone\n');
      const adopted = await c.query<{ session_id: string }>(
        `SELECT session_id FROM session_history WHERE reason = 'adopted'`,
      );
      expect(adopted).toEqual([{ session_id: task.sessionId }]);
    }, 240_000);
  });
} else {
  describeMissing(
    TITLE,
    missing ?? '',
    'the Postgres server and a Docker engine',
    'adopts the container after a SIGKILL',
  );
}
