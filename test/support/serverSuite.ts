/**
 * What the suites on the Postgres server share: the gate (they run where
 * ROUNDTABLE_TEST_DATABASE_URL is set, are skipped elsewhere and fail under
 * CI=true without it), a database of the suite's own, the deadline wait,
 * and runtimes over one simulated cluster on real time, each node with its
 * own pool, boot lock and leader lock, as machines sharing a Swarm have.
 */
import { afterAll, beforeAll, describe } from 'vitest';
import { createRuntime } from '../../src/actors/runtime.js';
import type { Runtime, RuntimeOptions } from '../../src/actors/runtimeTypes.js';
import { SimulatedBackend } from '../../src/containers/simulated/SimulatedBackend.js';
import type { SimulatedCluster } from '../../src/containers/simulated/SimulatedCluster.js';
import { connect, type DbHandle } from '../../src/db/index.js';
import { systemClock } from '../../src/supervisor/clock.js';
import { createServerDatabase, TEST_DATABASE_URL_VAR } from './databases.js';

/** `describe` with the server, `describe.skip` without it (never under CI=true). */
export const describeServer =
  (process.env[TEST_DATABASE_URL_VAR] ?? '') !== '' || process.env.CI === 'true'
    ? describe
    : describe.skip;

/** Waits for real I/O until `done()`: a deadline, not a sleep. */
export async function until(
  done: () => Promise<boolean> | boolean,
  what: string,
  ms = 20_000,
  stepMs = 25,
): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, stepMs));
  }
}

/** The suite's database: its URL and a handle to read and clean it with. */
export interface ServerDatabase {
  readonly url: string;
  readonly main: DbHandle;
}

/**
 * Makes (migrated) a database of the suite's own before its tests and drops
 * it after them. Call it inside a `describeServer` body.
 */
export function serverDatabase(): ServerDatabase {
  let url = '';
  let drop: (() => Promise<void>) | undefined;
  let main: DbHandle | undefined;
  beforeAll(async () => {
    const created = await createServerDatabase();
    if (created === null) throw new Error(`CI=true but ${TEST_DATABASE_URL_VAR} is not set`);
    url = created.url;
    drop = created.drop;
    main = await connect({ databaseUrl: url });
  }, 60_000);
  afterAll(async () => {
    await main?.close();
    await drop?.();
  });
  return {
    get url() {
      return url;
    },
    get main() {
      if (main === undefined) throw new Error('the server database is made in beforeAll');
      return main;
    },
  };
}

/** A node's options over `h` and `cluster`: caps of 10, polls fast enough for real time. */
export function simulatedNodeOptions(
  h: DbHandle,
  cluster: SimulatedCluster,
  nodeId: string,
  onError: (error: unknown) => void,
): RuntimeOptions {
  return {
    db: h.db,
    notifications: h,
    bootLock: h,
    backend: new SimulatedBackend(cluster),
    clock: systemClock,
    caps: { maxRunning: 10, defaultUserCap: 10 },
    nodeId,
    pollMs: 100,
    dispatchPollMs: 200,
    onError,
  };
}

/** The nodes a test booted, each on a pool of its own; `kill` then `close` after each test. */
export class ServerNodes {
  private readonly handles: DbHandle[] = [];
  private readonly nodes: Runtime[] = [];
  /** What every node's onError was given. */
  readonly errors: unknown[] = [];

  constructor(private readonly db: ServerDatabase) {}

  /** A node on the suite's database (or on `databaseUrl`, a proxy in front of it). */
  async boot(
    nodeId: string,
    cluster: SimulatedCluster,
    extra: Partial<RuntimeOptions> & { databaseUrl?: string } = {},
  ): Promise<Runtime> {
    const { databaseUrl, ...options } = extra;
    const h = await connect({ databaseUrl: databaseUrl ?? this.db.url, poolMax: 4 });
    this.handles.push(h);
    const rt = await createRuntime({
      ...simulatedNodeOptions(h, cluster, nodeId, (e) => this.errors.push(e)),
      ...options,
    });
    this.nodes.push(rt);
    return rt;
  }

  /** Kills every node (as a crash would: no clean stop). */
  kill(): void {
    for (const n of this.nodes.splice(0)) n.kill();
  }

  /** Closes every node's pool and forgets what they reported. */
  async close(): Promise<void> {
    for (const h of this.handles.splice(0)) await h.close();
    this.errors.length = 0;
  }
}

/** Submits `n` runs of `sleep seconds` for user u1 through `rt`. */
export async function submitTo(rt: Runtime, n: number, seconds: number): Promise<void> {
  for (let i = 0; i < n; i += 1)
    await rt.submit('u1', { title: `t${i}`, image: 'sim', command: ['sleep', String(seconds)] });
}
