/**
 * Three node processes on one Postgres server, racing (the production
 * shape: replicas behind a load balancer). Every node submits its share of
 * jobs for shared users and runs whatever the database grants it. The
 * ordered history is then replayed (src: test/support/dispatchReplay.ts):
 * the global and per-user caps were never exceeded at any instant, every
 * newcomer waited at most one grant per other user, whichever node it was
 * submitted through, and every job ran exactly once.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from '../../src/db/index.js';
import { cleanEnv } from '../cli/cliProcess.js';
import { createServerDatabase, TEST_DATABASE_URL_VAR } from '../support/databases.js';
import type { DispatchNodeConfig } from '../support/dispatchNode.js';
import { readDispatchHistory, replayDispatch } from '../support/dispatchReplay.js';

const NODE_SCRIPT = fileURLToPath(new URL('../support/dispatchNode.ts', import.meta.url));
const hasServer = Boolean(process.env[TEST_DATABASE_URL_VAR]);
const inCi = process.env.CI === 'true';
const suite = hasServer || inCi ? describe : describe.skip;

function runNode(config: DispatchNodeConfig): { child: ChildProcess; done: Promise<string> } {
  const child = spawn(process.execPath, ['--import', 'tsx', NODE_SCRIPT, JSON.stringify(config)], {
    env: cleanEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout?.setEncoding('utf8').on('data', (c: string) => {
    out += c;
  });
  child.stderr?.setEncoding('utf8').on('data', (c: string) => {
    err += c;
  });
  const done = new Promise<string>((resolve, reject) => {
    child.once('exit', (code) =>
      code === 0
        ? resolve(out)
        : reject(new Error(`${config.nodeId} exited ${code}: ${out}\n${err}`)),
    );
  });
  return { child, done };
}

suite(`dispatch across 3 node processes${hasServer ? '' : ` (skipped: ${TEST_DATABASE_URL_VAR} is not set)`}`, () => {
  let database: Awaited<ReturnType<typeof createServerDatabase>> = null;
  const children: ChildProcess[] = [];
  beforeAll(async () => {
    database = await createServerDatabase();
    if (database === null) throw new Error(`${TEST_DATABASE_URL_VAR} is not set (CI=true)`);
  }, 60_000);
  afterAll(async () => {
    for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
    await database?.drop();
  }, 60_000);

  it('never exceeds a cap at any instant, and a newcomer waits at most one grant per user', async () => {
    const url = database?.url ?? '';
    const users = Array.from({ length: 4 }, (_, i) => `u${i}`);
    const caps = { maxRunning: 6, defaultUserCap: 2 };
    // One override, set before anything runs: u0 may run only 1 (the others 2).
    const h = await connect({ databaseUrl: url, poolMax: 1 });
    await h.db
      .insertInto('user_caps')
      .values({ user_id: 'u0', max_running: 1, updated_at: new Date() })
      .execute();
    const perNode = 1_000;
    const nodes = ['a', 'b', 'c'].map((id, k) =>
      runNode({
        url,
        nodeId: `node-${id}`,
        // Every node submits for every user, in a different rotation.
        users: users.map((_, i) => users[(i + k) % users.length] ?? 'u0'),
        jobs: perNode,
        totalJobs: perNode * 3,
        caps,
        // Half the cluster's cap each: a node whose run ends takes the next
        // grant in that same tick when it has room (the others tick only
        // for a NOTIFY that says a grant is still possible), so with room
        // for the whole cap one node could run everything and there would
        // be no race between nodes to test.
        localMax: 3,
        jobSeconds: 0.004,
        lanes: 4,
        deadlineMs: 270_000,
      }),
    );
    children.push(...nodes.map((n) => n.child));
    await Promise.all(nodes.map((n) => n.done));
    const events = await readDispatchHistory(h.db);
    const owners = await h.db
      .selectFrom('sessions')
      .select((eb) => ['owner_node', eb.fn.countAll<string>().as('n')])
      .groupBy('owner_node')
      .execute();
    const attempts = await h.db
      .selectFrom('sessions')
      .select((eb) => eb.fn.max('attempt').as('max'))
      .executeTakeFirstOrThrow();
    await h.close();
    const replay = replayDispatch(events, {
      globalCap: caps.maxRunning,
      userCap: (u) => (u === 'u0' ? 1 : caps.defaultUserCap),
    });
    expect(replay.violations).toEqual([]);
    expect(replay.grants).toBe(perNode * 3);
    expect(replay.maxRunning).toBe(caps.maxRunning);
    expect(replay.maxRunningByUser.get('u0')).toBe(1);
    expect(replay.maxRunningByUser.get('u1')).toBe(2);
    expect(replay.newcomers).toBeGreaterThan(0);
    // Every job ran once (attempt 1 only) and more than one node ran jobs.
    expect(Number(attempts.max)).toBe(1);
    expect(owners.filter((o) => o.owner_node !== null).length).toBeGreaterThan(1);
  }, 290_000);
});
