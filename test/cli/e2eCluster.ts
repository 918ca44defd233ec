/**
 * Several `roundtable start` processes on one database of the Postgres
 * server, for the end-to-end suites: a database of their own, a data
 * directory, port and config file per node, tasks created over HTTP, reads
 * of the rows, and a teardown that ends every process it started and drops
 * the database, even after a failure.
 *
 * Real processes, so real time: every wait here has a deadline.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCli } from '../../scripts/build.js';
import type { Engine } from '../containers/docker/engine.js';
import { killRunsUnder } from '../containers/local/localFixture.js';
import { CliProcess, freePort, type LogRecord } from './cliProcess.js';

/** A first start runs migrations (and, on PGlite, initdb): slow on a busy machine. */
export const UP_MS = 90_000;
export const STOP_MS = 20_000;

export const SERVER = process.env.ROUNDTABLE_TEST_DATABASE_URL;
export const CI = process.env.CI === 'true';
/** Why a server suite is skipped, for its title ('' when it runs). */
export const serverSkipNote =
  SERVER === undefined ? ' (skipped: ROUNDTABLE_TEST_DATABASE_URL is not set)' : '';
/** `describe` with the server, or under CI=true (where its absence fails); else `describe.skip`. */
export const describeWithServer = SERVER === undefined && !CI ? describe.skip : describe;

/**
 * The server's URL, for a suite's `beforeAll`: undefined where the suite is
 * skipped, a throw under CI=true, where a missing server is a failure.
 */
export function serverUnlessSkipped(): string | undefined {
  if (SERVER === undefined && CI) throw new Error('CI=true needs ROUNDTABLE_TEST_DATABASE_URL');
  return SERVER;
}

/** Waits for the adopting node to finish the run of `taskId`, then stops it cleanly (SIGINT, exit 0). */
export async function adoptedRunSucceeds(node: CliProcess, taskId: string): Promise<void> {
  await node.waitFor(transition('succeeded', taskId), 60_000, 'the adopted run succeeded');
  node.signal('SIGINT');
  expect(await node.exitCode(STOP_MS)).toBe(0);
}

/** What keeps a suite on the server and a Docker engine from running here, or null. */
export function missingForEngine(engine: Engine): string | null {
  if (SERVER === undefined) return 'ROUNDTABLE_TEST_DATABASE_URL is not set';
  return engine.ok ? null : engine.reason;
}

/**
 * Stands in for a suite that cannot run here (`missing` says why): under
 * CI=true one test that fails saying what it needs, elsewhere the suite
 * skipped with the reason in its title.
 */
export function describeMissing(
  title: string,
  missing: string,
  needs: string,
  skippedTest: string,
): void {
  if (CI) {
    describe(title, () => {
      it(`needs ${needs} under CI=true`, () => {
        expect.fail(`CI=true but ${missing}`);
      });
    });
  } else {
    describe.skip(`${title} (skipped: ${missing})`, () => {
      it(skippedTest, () => undefined);
    });
  }
}

export const ADMIN = 'e2e-admin-token-0000000';
export const USERS: Readonly<Record<string, string>> = {
  ann: 'e2e-ann-token-000000000',
  bo: 'e2e-bo-token-0000000000',
  cy: 'e2e-cy-token-0000000000',
};

/** One statement on its own connection (the suites read rows while nodes run and die). */
export async function query<T>(
  connectionString: string,
  sql: string,
  params: unknown[] = [],
): Promise<T[]> {
  const c = new pg.Client({ connectionString });
  await c.connect();
  try {
    return (await c.query(sql, params)).rows as T[];
  } finally {
    await c.end();
  }
}

/** Polls until `check` gives a value; rejects after `ms` naming `what`. */
export async function until<T>(
  what: string,
  check: () => Promise<T | undefined> | T | undefined,
  ms: number,
  everyMs = 50,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() >= deadline) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** A card's board line saying it moved to `to` (`task` narrows it to one task). */
export const transition =
  (to: string, task?: string) =>
  (r: LogRecord): boolean =>
    r.component === 'board' &&
    (task === undefined || r.task === task) &&
    typeof r.msg === 'string' &&
    r.msg.endsWith(`→ ${to}`);

/** One node of the cluster: its own data directory, port and config file. */
export interface E2eNode {
  readonly name: string;
  readonly configPath: string;
  readonly dataDir: string;
  readonly baseUrl: string;
  /** The process of its latest start, if any. */
  current: CliProcess | undefined;
}

export class E2eCluster {
  /** Every process started, in order: the teardown ends each one still alive. */
  readonly processes: CliProcess[] = [];
  readonly nodes = new Map<string, E2eNode>();

  private constructor(
    readonly script: string,
    readonly dir: string,
    readonly url: string,
    private readonly dbName: string,
  ) {}

  /** A fresh database on the server (its name starts with `prefix`), the built CLI, a temporary directory. */
  static async create(server: string, prefix: string): Promise<E2eCluster> {
    const dbName = `${prefix}_${randomBytes(6).toString('hex')}`;
    await query(server, `CREATE DATABASE ${dbName}`);
    const u = new URL(server);
    u.pathname = `/${dbName}`;
    const dir = mkdtempSync(join(tmpdir(), `roundtable-${prefix}-`));
    try {
      return new E2eCluster(await buildCli(), dir, u.toString(), dbName);
    } catch (error) {
      rmSync(dir, { recursive: true, force: true });
      await query(server, `DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
      throw error;
    }
  }

  /**
   * Adds a node named `name` (its node id too), with `settings` over the
   * shared ones: this database, the test users and tokens.
   */
  async addNode(name: string, settings: Record<string, unknown>): Promise<E2eNode> {
    const port = await freePort();
    const dataDir = join(this.dir, name);
    const configPath = join(this.dir, `${name}.json`);
    writeFileSync(
      configPath,
      JSON.stringify({
        dataDir,
        databaseUrl: this.url,
        port,
        nodeId: name,
        users: Object.keys(USERS),
        tokens: { admin: ADMIN, users: USERS },
        shutdownMs: 15_000,
        ...settings,
      }),
    );
    const node: E2eNode = {
      name,
      configPath,
      dataDir,
      baseUrl: `http://127.0.0.1:${port}`,
      current: undefined,
    };
    this.nodes.set(name, node);
    return node;
  }

  /** Starts the node's process (again, after a stop or a kill: same data directory). */
  start(node: E2eNode, env: Record<string, string> = {}): CliProcess {
    const p = new CliProcess(this.script, ['start', '--config', node.configPath], env);
    this.processes.push(p);
    node.current = p;
    return p;
  }

  /** Starts the node and waits for its `ready` record. */
  async startReady(node: E2eNode, env: Record<string, string> = {}): Promise<CliProcess> {
    const p = this.start(node, env);
    await p.waitFor((r) => r.msg === 'ready', UP_MS, `${node.name} ready`);
    return p;
  }

  /** The owner name (`node@boot`) of the node's latest boot, from its heartbeat row. */
  async latestOwner(node: E2eNode): Promise<string> {
    const rows = await this.query<{ owner: string }>(
      'SELECT owner FROM node_heartbeats WHERE node_id = $1 ORDER BY started_at DESC LIMIT 1',
      [node.name],
    );
    const owner = rows[0]?.owner;
    if (owner === undefined) throw new Error(`${node.name} has no heartbeat row`);
    return owner;
  }

  query<T>(sql: string, params: unknown[] = []): Promise<T[]> {
    return query<T>(this.url, sql, params);
  }

  /** Ends every process still alive (SIGKILL), drops the database, removes the directory. */
  async close(server: string): Promise<void> {
    const errors: unknown[] = [];
    for (const p of this.processes) await p.kill().catch((e: unknown) => errors.push(e));
    rmSync(this.dir, { recursive: true, force: true });
    await query(server, `DROP DATABASE IF EXISTS ${this.dbName} WITH (FORCE)`).catch((e: unknown) =>
      errors.push(e),
    );
    if (errors.length > 0) throw new AggregateError(errors, 'e2e cluster teardown failed');
  }
}

/** Two local-backend nodes of one cluster, set once the file's `beforeAll` ran. */
export interface TwoLocalNodes {
  cluster: E2eCluster;
  a: E2eNode;
  b: E2eNode;
}

/** A local node's settings in the two-node suites: room for four runs, polls every 200 ms. */
const LOCAL_NODE = { backend: 'local', caps: { maxRunning: 4, defaultUserCap: 4 }, pollMs: 200 };

/**
 * Two nodes named `names` on the local backend (`settings`, by default
 * LOCAL_NODE), on a new database `dbName` of the server, made before the
 * file's tests (nothing without a server: the suite skips) and closed after
 * them: every process SIGKILLed, the runs still going under either data
 * directory too (a failed test), the database dropped.
 */
export function twoLocalNodes(
  dbName: string,
  names: readonly [string, string],
  settings: Record<string, unknown> = LOCAL_NODE,
): TwoLocalNodes {
  const nodes = {} as TwoLocalNodes;
  beforeAll(async () => {
    const server = serverUnlessSkipped();
    if (server === undefined) return;
    nodes.cluster = await E2eCluster.create(server, dbName);
    nodes.a = await nodes.cluster.addNode(names[0], settings);
    nodes.b = await nodes.cluster.addNode(names[1], settings);
  });
  afterAll(async () => {
    if (nodes.cluster === undefined) return;
    for (const p of nodes.cluster.processes) await p.kill();
    for (const node of [nodes.a, nodes.b]) killRunsUnder(node.dataDir);
    await nodes.cluster.close(SERVER ?? '');
  });
  return nodes;
}

/** A task created over the node's HTTP API as `user`. */
export async function createTaskOver(
  node: E2eNode,
  user: string,
  task: { title: string; image: string; command: string[] },
): Promise<{ taskId: string; sessionId: string; position: number }> {
  const res = await fetch(`${node.baseUrl}/api/tasks`, {
    method: 'POST',
    headers: { authorization: `Bearer ${USERS[user]}`, 'content-type': 'application/json' },
    body: JSON.stringify(task),
    signal: AbortSignal.timeout(10_000),
  });
  if (res.status !== 201)
    throw new Error(`create ${task.title}: ${res.status} ${await res.text()}`);
  return (await res.json()) as { taskId: string; sessionId: string; position: number };
}

/**
 * A command that appends a line to `starts` each time it starts (so the
 * file proves how often it ran), prints `step 1`, waits for the file `gate`,
 * then prints `step 2`: it is mid-run until the test opens the gate.
 */
export function countsItsStarts(starts: string, gate: string): string[] {
  return [
    'sh',
    '-c',
    'echo start >> "$1"; echo "step 1"; while [ ! -e "$2" ]; do sleep 0.05; done; echo "step 2"',
    'job',
    starts,
    gate,
  ];
}
