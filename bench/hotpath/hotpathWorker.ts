/**
 * One measured node of the runtime hot-path suite (bench/suites/hotpath.bench.ts),
 * in a process of its own so that `process.cpuUsage()` is this node's alone.
 *
 * It imports the runtime from the source tree named by `--root` (this
 * checkout, or a worktree of the baseline commit), so one run of the suite
 * measures the old and the new code side by side with the same driver. The
 * driver uses only what both sides have: `connect`, `migrate`,
 * `createRuntime`, `submit`, `health` and the simulated backend.
 *
 * A job is one `runtime.submit` of the command `bench <key>`, which the
 * simulated cluster runs at once (exit 0, no output). A window submits N
 * jobs for 100 users (per-user cap 1, global cap 20) in chunks of 1,000 and
 * ends when every job started and the node holds nothing and has no op
 * waiting (every finish committed). Optionally a backlog of queued rows of
 * one more user whose cap is 0 waits the whole time: it is in every index,
 * on the board and in the lines, but none of it runs.
 *
 * On PGlite the database runs on this thread: the CPU spent inside its
 * synchronous protocol call (`execProtocolRawSync`) is measured and
 * reported apart, so the node's own CPU is the total minus that.
 *
 * Beside the CPU, two shares of each window's wall time say what bounds it:
 * `loopBusy`, the event loop's utilization (the thread running the
 * runtime's callbacks, not waiting in the poll), and on the server
 * `tickOut`, the time at least one `rt_tick` statement was out (handed to
 * node-postgres and not yet answered), the database's turn. When both are
 * well under 1 and their sum is near 1, the node and the database take
 * turns: each waits for the other.
 *
 * Prints one JSON line on stdout:
 * `{ windows: [{ jobs, wallMs, cpuUs, pgliteUs, loopBusy, tickOut }] }`
 * (`tickOut` null on PGlite, whose statements run on the node's thread).
 */
import { performance as perfHooks } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import type { HotpathWindow } from './hotpathWindow.js';

/** The loop's busy share (not on the DOM type of the global `performance`). */
const eventLoopUtilization = perfHooks.eventLoopUtilization.bind(perfHooks);

const { values: args } = parseArgs({
  options: {
    root: { type: 'string' },
    engine: { type: 'string' },
    url: { type: 'string' },
    jobs: { type: 'string', default: '2000' },
    windows: { type: 'string', default: '3' },
    backlog: { type: 'string', default: '0' },
  },
});
const root = args.root ?? process.cwd();
const engine = args.engine === 'server' ? 'server' : 'pglite';
const JOBS = Number(args.jobs);
const WINDOWS = Number(args.windows);
const BACKLOG = Number(args.backlog);
const USERS = 100;
const CHUNK = 1000;

const from = async <T>(path: string): Promise<T> =>
  (await import(pathToFileURL(`${root}/${path}`).href)) as T;

interface Runtime {
  submit(
    userId: string,
    input: { title: string; image: string; command: string[] },
  ): Promise<unknown>;
  health(): { holding: number; backlog: number };
  booted: Promise<unknown>;
  stop(): Promise<void>;
}
interface DbHandle {
  db: unknown;
  close(): Promise<void>;
}
type SqlTag = (
  strings: TemplateStringsArray,
  ...values: unknown[]
) => {
  execute(db: unknown): Promise<unknown>;
};

/**
 * CPU inside PGlite's synchronous protocol call, in µs (0 on the server):
 * process CPU read around the call (wall time would count the waits for a
 * core on a loaded machine).
 */
let pgliteUs = 0;
{
  const proto = PGlite.prototype as unknown as {
    execProtocolRawSync: (this: unknown, ...a: unknown[]) => unknown;
  };
  const original = proto.execProtocolRawSync;
  proto.execProtocolRawSync = function (this: unknown, ...a: unknown[]) {
    const c0 = process.cpuUsage();
    try {
      return original.apply(this, a);
    } finally {
      const c = process.cpuUsage(c0);
      pgliteUs += c.user + c.system;
    }
  };
}

/**
 * Wall time with at least one `rt_tick` out, in ms (the union of the
 * statements' intervals: two out at once count once).
 */
const ticks = { out: 0, since: 0, ms: 0 };
if (engine === 'server') {
  const proto = pg.Client.prototype as unknown as { query: (...a: unknown[]) => unknown };
  const query = proto.query;
  proto.query = function (this: unknown, ...a: unknown[]) {
    const sent = performance.now();
    const result = query.apply(this, a);
    if (typeof a[0] !== 'string' || !a[0].includes('rt_tick(') || !(result instanceof Promise))
      return result;
    if (ticks.out++ === 0) ticks.since = sent;
    const settled = () => {
      if (--ticks.out === 0) ticks.ms += performance.now() - ticks.since;
    };
    result.then(settled, settled);
    return result;
  };
}
/** The tick time so far, counting a statement still out up to now. */
const tickMsNow = () => ticks.ms + (ticks.out > 0 ? performance.now() - ticks.since : 0);

const dbMod = await from<{
  connect(o: Record<string, unknown>): Promise<DbHandle>;
  migrate(db: unknown): Promise<unknown>;
}>('src/db/index.ts');
const { createRuntime } = await from<{ createRuntime(o: unknown): Promise<Runtime> }>(
  'src/actors/runtime.ts',
);
const { SimulatedBackend } = await from<{ SimulatedBackend: new (c: unknown) => unknown }>(
  'src/containers/simulated/SimulatedBackend.ts',
);
const { SimulatedCluster } = await from<{ SimulatedCluster: new (o: unknown) => unknown }>(
  'src/containers/simulated/SimulatedCluster.ts',
);
const { sql } = (await import('kysely')) as unknown as { sql: SqlTag };

const timers = new Set<ReturnType<typeof setTimeout>>();
const clock = {
  now: () => Date.now(),
  setTimeout(fn: () => void, ms: number) {
    const t = setTimeout(() => {
      timers.delete(t);
      fn();
    }, ms);
    timers.add(t);
    return t;
  },
  clearTimeout(id: unknown) {
    timers.delete(id as ReturnType<typeof setTimeout>);
    clearTimeout(id as ReturnType<typeof setTimeout>);
  },
};

const h = await dbMod.connect(
  engine === 'server' ? { databaseUrl: args.url } : { dataDir: 'memory://' },
);
await dbMod.migrate(h.db);
// The backlog's bulk insert and rt_repair run past the node's statement
// deadline on a loaded machine: on the server they get a connection with none.
const setup =
  engine === 'server'
    ? await dbMod.connect({ databaseUrl: args.url, statementTimeoutMs: 0, queryTimeoutMs: 0 })
    : h;
if (BACKLOG > 0) {
  const spec = JSON.stringify({ image: 'bench', command: ['bench', 'backlog'] });
  await sql`INSERT INTO user_caps (user_id, max_running, updated_at) VALUES ('backlog', 0, now())`.execute(
    setup.db,
  );
  await sql`INSERT INTO tasks (id, user_id, title, run_spec, board_column, created_at, updated_at)
    SELECT 'tsk_' || md5('t' || i), 'backlog', 'backlog ' || i, ${spec}::jsonb, 'queued',
      now() - interval '1 hour' + i * interval '1 microsecond', now()
    FROM generate_series(1, ${BACKLOG}::int) i`.execute(setup.db);
  await sql`INSERT INTO sessions (id, task_id, user_id, kind, status, attempt, enqueued_at, epoch, updated_at)
    SELECT 'ses_' || md5('s' || i), 'tsk_' || md5('t' || i), 'backlog', 'run', 'queued', 1,
      now() - interval '1 hour' + i * interval '1 microsecond', 0, now()
    FROM generate_series(1, ${BACKLOG}::int) i`.execute(setup.db);
  await sql`ANALYZE`.execute(setup.db);
  await sql`SELECT rt_repair()`.execute(setup.db);
}
if (setup !== h) await setup.close();

let starts = 0;
const cluster = new SimulatedCluster({
  clock,
  nodes: ['sim-1', 'sim-2'],
  commands: {
    bench: () => {
      starts += 1;
      return { output: [], durationMs: 0, exitCode: 0 };
    },
  },
});
let errors = 0;
const runtime = await createRuntime({
  db: h.db,
  backend: new SimulatedBackend(cluster),
  clock,
  caps: { maxRunning: 20, defaultUserCap: 1 },
  nodeId: 'hotpath',
  onError: (e: unknown) => {
    if (++errors <= 5) process.stderr.write(`hotpath runtime error: ${String(e)}\n`);
  },
});
await runtime.booted;

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
const windows: HotpathWindow[] = [];
for (let w = 0; w <= WINDOWS; w++) {
  // Window 0 warms the JIT and the pool; it is not reported.
  const jobs = w === 0 ? Math.min(500, JOBS) : JOBS;
  await pause(300);
  const startsBefore = starts;
  const p0 = pgliteUs;
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const loop0 = eventLoopUtilization();
  const tick0 = tickMsNow();
  for (let i = 0; i < jobs; i += CHUNK)
    await Promise.all(
      Array.from({ length: Math.min(CHUNK, jobs - i) }, (_, j) =>
        runtime.submit(`u${(i + j) % USERS}`, {
          title: `w${w}k${i + j}`,
          image: 'bench',
          command: ['bench', `w${w}k${i + j}`],
        }),
      ),
    );
  for (;;) {
    const hl = runtime.health();
    if (starts - startsBefore >= jobs && hl.holding === 0 && hl.backlog === 0) break;
    await pause(5);
  }
  const wallMs = performance.now() - t0;
  const c = process.cpuUsage(c0);
  const loopBusy = eventLoopUtilization(loop0).utilization;
  const tickOut = engine === 'server' ? (tickMsNow() - tick0) / wallMs : null;
  if (w > 0)
    windows.push({
      jobs,
      wallMs,
      cpuUs: c.user + c.system,
      pgliteUs: pgliteUs - p0,
      loopBusy,
      tickOut,
    });
}
await runtime.stop();
for (const t of timers) clearTimeout(t);
await h.close();
process.stdout.write(`${JSON.stringify({ windows, errors })}\n`);
process.exit(0);
