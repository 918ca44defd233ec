/**
 * End to end: the bundled CLI as a real process. `start` on a temporary
 * directory (PGlite there, the simulated cluster at 10x speed, a free port),
 * tasks created over HTTP, SIGTERM while some run and some wait, a task
 * enqueued from the command line while the node is down, a second start,
 * and every task finished with nothing lost, checked in the rows.
 *
 * Real time, because it is a real process: every wait is bounded.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCli } from '../../scripts/build.js';
import { connect, listSessionsForTask } from '../../src/db/index.js';
import { CliProcess, cleanEnv, freePort, type LogRecord } from './cliProcess.js';

const ADMIN = 'e2e-admin-token-0000000';
const USERS = { ann: 'e2e-ann-token-000000000', bo: 'e2e-bo-token-0000000000' };
const UP_MS = 90_000; // a first start runs initdb, which is slow on a busy machine
const STOP_MS = 20_000;
const DRAIN_MS = 60_000;

let script: string;
let dir: string;
let configPath: string;
let baseUrl: string;
const running: CliProcess[] = [];

function startNode(): CliProcess {
  const p = new CliProcess(script, ['start', '--config', configPath]);
  running.push(p);
  return p;
}

async function createTask(user: keyof typeof USERS, title: string, command: string[]) {
  const res = await fetch(`${baseUrl}/api/tasks`, {
    method: 'POST',
    headers: { authorization: `Bearer ${USERS[user]}`, 'content-type': 'application/json' },
    body: JSON.stringify({ title, image: 'alpine:3.20', command }),
    signal: AbortSignal.timeout(10_000),
  });
  expect(res.status).toBe(201);
  return (await res.json()) as { taskId: string; sessionId: string; position: number };
}

const transition = (to: string) => (r: LogRecord) =>
  r.component === 'board' && typeof r.msg === 'string' && r.msg.endsWith(`→ ${to}`);

beforeAll(async () => {
  script = await buildCli();
  dir = mkdtempSync(join(tmpdir(), 'roundtable-e2e-'));
  const port = await freePort();
  baseUrl = `http://127.0.0.1:${port}`;
  configPath = join(dir, 'roundtable.json');
  writeFileSync(
    configPath,
    JSON.stringify({
      dataDir: join(dir, 'state'),
      port,
      users: Object.keys(USERS),
      tokens: { admin: ADMIN, users: USERS },
      // Explicit, so a DOCKER_HOST in the environment cannot move it to Swarm.
      backend: 'simulated',
      caps: { maxRunning: 2, defaultUserCap: 1 },
      simulated: { speed: 10 },
      shutdownMs: 15_000,
    }),
  );
});

afterAll(async () => {
  for (const p of running) await p.kill();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('roundtable start, stopped mid-run and started again', () => {
  it('finishes every task with nothing lost', async () => {
    const first = startNode();
    const ready = await first.waitFor((r) => r.msg === 'ready', UP_MS, 'ready record');
    expect(ready.url).toBe(baseUrl);
    expect(existsSync(join(dir, 'state', 'node.json'))).toBe(true);

    // 6 tasks of 3 s each (30 s at 10x) under a global cap of 2: most of them wait.
    const created = [];
    for (let i = 0; i < 3; i++) {
      created.push(await createTask('ann', `ann ${i}`, ['agent', '30']));
      created.push(await createTask('bo', `bo ${i}`, ['agent', '30']));
    }
    expect(Math.max(...created.map((c) => c.position))).toBeGreaterThan(1);

    // Stop it as soon as one run holds a runner: the others wait in line or run.
    await first.waitFor(transition('running'), 30_000, 'a running card');
    first.signal('SIGTERM');
    expect(await first.exitCode(STOP_MS)).toBe(0);
    expect(first.records.some((r) => r.msg === 'stopped')).toBe(true);
    expect(existsSync(join(dir, 'state', 'node.json'))).toBe(false);

    // Enqueued while no node runs: straight into the rows.
    const enqueue = spawnSync(
      process.execPath,
      [script, 'enqueue', '--config', configPath, '--user', 'bo', '--json', '--', 'echo', 'late'],
      { encoding: 'utf8', timeout: UP_MS, env: cleanEnv({ ROUNDTABLE_LOG_LEVEL: 'warn' }) },
    );
    expect(enqueue.status, enqueue.stderr).toBe(0);
    const late = JSON.parse(enqueue.stdout) as { taskId: string; via: string };
    expect(late.via).toBe('rows');

    const second = startNode();
    await second.waitFor((r) => r.msg === 'ready', UP_MS, 'second ready record');
    const all = [...created.map((c) => c.taskId), late.taskId];
    await second.waitFor(
      () =>
        all.every((id) => second.records.some((r) => r.task === id && transition('succeeded')(r))),
      DRAIN_MS,
      'every task succeeded',
    );
    second.signal('SIGINT');
    expect(await second.exitCode(STOP_MS)).toBe(0);

    // The rows: every task's latest attempt succeeded, and the stop cost at least one re-run.
    const store = await connect({ dataDir: join(dir, 'state', 'pgdata') });
    try {
      let reruns = 0;
      for (const id of all) {
        const sessions = await listSessionsForTask(store.db, id);
        expect(sessions.at(-1)?.status, id).toBe('succeeded');
        expect(sessions.filter((s) => s.status === 'succeeded')).toHaveLength(1);
        for (const s of sessions.slice(0, -1)) expect(s.status).toBe('failed');
        reruns += sessions.length - 1;
      }
      expect(reruns).toBeGreaterThan(0);
    } finally {
      await store.close();
    }
  }, 240_000);
});
