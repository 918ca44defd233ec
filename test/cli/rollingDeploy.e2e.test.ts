/**
 * A rolling deploy, for real (issue 16): two `roundtable start` processes on
 * one Postgres server database and the real Swarm engine. Node A runs three
 * sessions whose containers print, wait at a gate, sleep and print again,
 * while three more wait in line behind the global cap; node B starts (and
 * must leave A's runs alone: A is alive); A is stopped with SIGTERM, and in
 * the other case killed with SIGKILL. B sees A gone (its boot lock freed),
 * adopts A's three running containers, which finish from their markers, and
 * runs the three waiting sessions. Nothing is lost, nothing runs twice: each
 * container counts its own execs in its /tmp (`runs=1`), every task has one
 * session, and the history shows one adoption each, by B.
 *
 * The gate (a file the test creates in each container once A is gone) keeps
 * the runs going for as long as B takes to boot on a busy machine, without
 * a sleep long enough to cover it. Without ROUNDTABLE_TEST_DATABASE_URL or a
 * Swarm engine the suite is skipped with the reason in its title; with
 * CI=true either is a failure. Real processes, real time: every wait is
 * bounded, and every process and service started is ended in afterEach.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { namespaceFilter } from '../../src/containers/namespace.js';
import { runningContainer, sweepServices } from '../actors/runtime.swarmHarness.js';
import { detectEngine, RUNNER_IMAGE } from '../containers/docker/engine.js';
import { testNamespace } from '../containers/testNamespace.js';
import {
  createTaskOver,
  describeMissing,
  E2eCluster,
  type E2eNode,
  missingForEngine,
  SERVER,
  STOP_MS,
  transition,
  until,
} from './e2eCluster.js';

const engine = await detectEngine({ swarm: true });
const missing = missingForEngine(engine);
const TITLE = 'a rolling deploy on Swarm: B adopts what A ran';

/** The whole test, boots included; each wait inside has its own deadline. */
const BUDGET_MS = 150_000;
const DRAIN_MS = 60_000;
const GATE = '/tmp/rt-go';

/** Counts its execs in the container, prints, waits at the gate (at most 120 s), sleeps, prints. */
const gated = (title: string) => ({
  title,
  image: RUNNER_IMAGE,
  command: [
    'sh',
    '-c',
    `echo run >> /tmp/rt-runs; echo start; i=0; while [ ! -e ${GATE} ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i+1)); done; sleep 2; echo "runs=$(wc -l < /tmp/rt-runs)"; echo done`,
  ],
});
/** The same without the gate: what waits in line. */
const short = (title: string) => ({
  title,
  image: RUNNER_IMAGE,
  command: [
    'sh',
    '-c',
    'echo run >> /tmp/rt-runs; echo start; sleep 1; echo "runs=$(wc -l < /tmp/rt-runs)"; echo done',
  ],
});
const OUTPUT = 'start\nruns=1\ndone\n';

type Created = Awaited<ReturnType<typeof createTaskOver>>;

interface Row {
  task_id: string;
  id: string;
  attempt: number;
  status: string;
  exit_code: number | null;
  owner_node: string | null;
  handle: string | null;
  started_at: Date | null;
}

if (missing === null && engine.ok) {
  const { docker } = engine;
  let cluster: E2eCluster | undefined;
  let namespace = '';

  afterEach(async () => {
    try {
      await cluster?.close(SERVER ?? '');
    } finally {
      cluster = undefined;
      // After the processes are gone: nothing creates a service behind the sweep.
      await sweepServices(docker, namespace);
    }
  });

  const sessions = (c: E2eCluster) =>
    c.query<Row>(
      `SELECT task_id, id, attempt, status, exit_code, owner_node, handle, started_at
         FROM sessions ORDER BY task_id, attempt`,
    );

  /** Opens the gate of the run in `handle`'s container: `touch` through an exec. */
  async function openGate(handle: string): Promise<void> {
    const container = await runningContainer(docker, handle);
    if (container === undefined) throw new Error(`${handle} has no running container`);
    const exec = await docker
      .getContainer(container.id)
      .exec({ Cmd: ['touch', GATE], AttachStdout: false, AttachStderr: false });
    await exec.start({ Detach: true });
  }

  describe(TITLE, () => {
    for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
      it(
        `A ${signal === 'SIGTERM' ? 'stopped (SIGTERM)' : 'killed (SIGKILL)'}: B adopts its running containers, which run once, and takes the queue`,
        async () => {
          namespace = testNamespace('rolling');
          const c = await E2eCluster.create(SERVER ?? '', 'rt_rolling');
          cluster = c;
          const settings = {
            backend: 'swarm',
            dockerHost: process.env.DOCKER_HOST,
            namespace,
            caps: { maxRunning: 3, defaultUserCap: 3 },
            pollMs: 300,
          };
          const a: E2eNode = await c.addNode('node-a', settings);
          const b: E2eNode = await c.addNode('node-b', settings);
          const pa = await c.startReady(a);
          const ownerA = await c.latestOwner(a);

          const long: Created[] = [];
          for (let i = 0; i < 3; i++) long.push(await createTaskOver(a, 'ann', gated(`long ${i}`)));
          const waiting: Created[] = [];
          for (let i = 0; i < 3; i++)
            waiting.push(await createTaskOver(a, 'bo', short(`queued ${i}`)));
          // Each long run's exec has started (its start time is written once the exec runs).
          await until(
            'A runs the three long sessions',
            async () => {
              const rows = (await sessions(c)).filter((r) =>
                long.some((t) => t.sessionId === r.id),
              );
              return rows.length === 3 &&
                rows.every((r) => r.status === 'running' && r.owner_node === ownerA && r.started_at)
                ? rows
                : undefined;
            },
            60_000,
            200,
          );

          // B boots while A is alive: A's runs are not B's to take.
          const pb = await c.startReady(b);
          const ownerB = await c.latestOwner(b);
          const before = await sessions(c);
          expect(before.filter((r) => r.status === 'running').map((r) => r.owner_node)).toEqual([
            ownerA,
            ownerA,
            ownerA,
          ]);
          expect(before.filter((r) => r.status === 'queued')).toHaveLength(3);

          const stoppedAt = Date.now();
          pa.signal(signal);
          const code = await pa.exitCode(STOP_MS);
          if (signal === 'SIGTERM') expect(code).toBe(0);
          // The runs outlived their node: the gate is still closed, no marker yet.
          for (const t of long) await openGate(`rt-${t.sessionId}`);

          const all = [...long, ...waiting];
          await until(
            'every task finished',
            async () => {
              const rows = await sessions(c);
              return rows.length >= all.length &&
                rows.every((r) => r.status !== 'queued' && r.status !== 'running')
                ? rows
                : undefined;
            },
            DRAIN_MS,
            250,
          );
          for (const t of all)
            await pb.waitFor(transition('succeeded', t.taskId), 10_000, `${t.taskId} on B's board`);
          pb.signal('SIGTERM');
          expect(await pb.exitCode(STOP_MS)).toBe(0);

          // One session per task: nothing re-queued, nothing lost; B finished them all.
          const after = await sessions(c);
          expect(after.map((r) => [r.task_id, r.attempt, r.status, r.exit_code])).toEqual(
            all
              .map((t) => [t.taskId, 1, 'succeeded', 0])
              .sort((x, y) => String(x[0]).localeCompare(String(y[0]))),
          );
          expect(new Set(after.map((r) => r.owner_node))).toEqual(new Set([ownerB]));
          // Each container ran its command once, by its own count.
          const outputs = await c.query<{ session_id: string; text: string }>(
            'SELECT session_id, text FROM session_outputs ORDER BY session_id',
          );
          expect(outputs.map((o) => o.text)).toEqual(all.map(() => OUTPUT));
          // A's three were adopted once each, by B, after A was gone; the others granted to B.
          const events = await c.query<{ session_id: string; node: string; at: Date }>(
            `SELECT session_id, node, at FROM session_history WHERE reason = 'adopted'`,
          );
          expect(events.map((e) => e.session_id).sort()).toEqual(
            long.map((t) => t.sessionId).sort(),
          );
          expect(new Set(events.map((e) => e.node))).toEqual(new Set([ownerB]));
          const lag = Math.max(...events.map((e) => e.at.getTime() - stoppedAt));
          console.log(`${signal}: A's runs adopted by B within ${lag} ms of the signal`);
          // The boot lock's DOWN, not the 60 s heartbeat window.
          expect(lag).toBeLessThan(15_000);
          // B removed every service once its run finished.
          await until(
            'services removed',
            async () =>
              (await docker.listServices({ filters: { label: namespaceFilter(namespace) } }))
                .length === 0
                ? true
                : undefined,
            20_000,
            250,
          );
        },
        BUDGET_MS,
      );
    }
  });
} else {
  describeMissing(
    TITLE,
    missing ?? '',
    'the Postgres server and a Swarm engine',
    'adopts A’s runs on B after SIGTERM and SIGKILL',
  );
}
