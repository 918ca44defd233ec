/**
 * The dispatch engine's node-side numbers on the Postgres server (issue 15,
 * "Numbers to reach"), each on its own scratch database (bench/peers/scratchDb.ts):
 *
 * - **boot**: 100,000 queued + 1,000 running rows inserted in bulk with SQL
 *   (sessions with no turn yet, as the pre-tick repositories wrote them), then
 *   `rt_repair()` (the backfill pass: renumbers every line and rebuilds the
 *   counters; timed), then `createRuntime` timed to its resolve, to its first
 *   tick's reply and to `booted` (the Reconciler's boot pass); and a second
 *   `rt_repair()` on consistent rows (the periodic pass, which finds nothing).
 *   The running rows belong to another live node (fresh heartbeat), so the
 *   boot pass leaves them be and no grant is possible (1,000 > global cap 20).
 * - **down**: a runtime with global cap 1 whose jobs hold their slot; the
 *   holder's TaskRunner is terminated through the taskRunners supervisor's
 *   `terminateChild` (a DOWN at the RunnerPool), timed until the reply of the
 *   tick that granted the next session (the slot comes back in that tick: a
 *   `runner_lost` finish with the session re-queued at the head of its
 *   user's line, and the grant), against that tick's own duration.
 * - **cpu**: node CPU per job (`process.cpuUsage`, this process: the runtime
 *   and the bench's `submit` calls) over windows of N no-op jobs for 100
 *   users (cap 1, global 20) while a backlog of 100 or 100,000 queued rows
 *   waits for one more user whose cap is 0 (a `user_caps` override): the
 *   backlog is in every index and on the board, but the measured jobs run.
 *   The same windows read `rt_tick`'s time from `pg_stat_user_functions`
 *   (`track_functions = 'pl'` on the scratch database): database vs node.
 *
 * Knobs: DISPATCH_DOWN_REPS (50), DISPATCH_CPU_JOBS (2000), DISPATCH_RUNS (3).
 */
import { loadavg } from 'node:os';
import { sql } from 'kysely';
import pg from 'pg';
import { createRuntime } from '../../src/actors/runtime.js';
import type { Runtime } from '../../src/actors/runtimeTypes.js';
import type { SimCommandRegistry } from '../../src/containers/simulated/commands.js';
import { SimulatedBackend } from '../../src/containers/simulated/SimulatedBackend.js';
import { SimulatedCluster } from '../../src/containers/simulated/SimulatedCluster.js';
import { connect, type DbHandle, migrate } from '../../src/db/index.js';
import {
  createScratch,
  dropScratch,
  readFunctionTimes,
  trackFunctions,
} from '../peers/scratchDb.js';
import { realClock } from '../peers/systems/roundtableRuntime.js';
import { median, percentile, positiveIntEnv, writeResults } from '../stats.js';

const env = positiveIntEnv;
const DOWN_REPS = env('DISPATCH_DOWN_REPS', 50);
const CPU_JOBS = env('DISPATCH_CPU_JOBS', 2000);
const RUNS = env('DISPATCH_RUNS', 3);
const BOOT = { queued: 100_000, running: 1_000, users: 1_000 };
const SUBMIT_CHUNK = 1000;

const log = (s: string): void => {
  process.stdout.write(`${s}\n`);
};

/** Every `rt_tick` call this process makes through pg: when it was sent, answered, and what it granted. */
interface TickCall {
  sent: number;
  answered: number;
  granted: number;
}
const ticks: TickCall[] = [];
let tickWaiters: ((t: TickCall) => void)[] = [];
/** While set, every statement's round trip (ms) by its first 60 characters. */
let recording: Map<string, { n: number; ms: number }> | undefined;
{
  const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = proto.query;
  proto.query = function (this: object, ...args: unknown[]) {
    const first = args[0];
    const text =
      typeof first === 'string'
        ? first
        : typeof first === 'object' && first !== null && 'text' in first
          ? String((first as { text: unknown }).text)
          : '';
    const out = original.apply(this, args);
    const rec = recording;
    if (rec !== undefined && out instanceof Promise) {
      const t0 = performance.now();
      const key = text.trim().replace(/\s+/g, ' ').slice(0, 60);
      void out.then(
        () => {
          const e = rec.get(key) ?? { n: 0, ms: 0 };
          e.n += 1;
          e.ms += performance.now() - t0;
          rec.set(key, e);
        },
        () => undefined,
      );
    }
    if (text.includes('rt_tick(') && out instanceof Promise) {
      const sent = performance.now();
      void out.then(
        (res: { rows?: { r?: { granted?: unknown[] } }[] }) => {
          const t = {
            sent,
            answered: performance.now(),
            granted: res.rows?.[0]?.r?.granted?.length ?? 0,
          };
          ticks.push(t);
          const w = tickWaiters;
          tickWaiters = [];
          for (const f of w) f(t);
        },
        () => undefined,
      );
    }
    return out;
  };
}
const nextTick = (pred: (t: TickCall) => boolean, deadlineMs: number): Promise<TickCall> =>
  new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no such tick in time')), deadlineMs);
    const check = (t: TickCall): void => {
      if (pred(t)) {
        clearTimeout(timer);
        resolve(t);
      } else tickWaiters.push(check);
    };
    tickWaiters.push(check);
  });

interface Node {
  runtime: Runtime;
  h: DbHandle;
  stop(): Promise<void>;
}

async function startNode(
  url: string,
  caps: { maxRunning: number; defaultUserCap: number },
  onStart: (key: string) => void,
): Promise<Node> {
  const h = await connect({ databaseUrl: url });
  const clock = realClock();
  const commands: SimCommandRegistry = {
    bench: ([key = '?', job = 'noop']) => {
      onStart(key);
      return { output: [], durationMs: job === 'hold' ? 3_600_000 : 0, exitCode: 0 };
    },
  };
  const cluster = new SimulatedCluster({ clock, nodes: ['sim-1', 'sim-2'], commands });
  let errors = 0;
  const runtime = await createRuntime({
    db: h.db,
    backend: new SimulatedBackend(cluster),
    clock,
    caps,
    nodeId: 'bench-a',
    onError: (e) => {
      if (++errors <= 5) process.stderr.write(`dispatch bench runtime error: ${String(e)}\n`);
    },
  });
  return {
    runtime,
    h,
    async stop() {
      await runtime.stop();
      clock.clearAll();
      await h.close();
    },
  };
}

/** Bulk rows with SQL: `queued` sessions over `users` users (+ optional running ones of a live other node). */
async function insertRows(
  h: DbHandle,
  o: { queued: number; running: number; users: number; userPrefix: string; from: number },
): Promise<void> {
  const spec = JSON.stringify({ image: 'bench', command: ['bench', 'backlog', 'noop'] });
  const total = o.queued + o.running;
  await sql`INSERT INTO tasks (id, user_id, title, run_spec, board_column, created_at, updated_at)
    SELECT 'tsk_' || md5('t' || i), ${o.userPrefix} || (i % ${o.users}), 'backlog ' || i, ${spec}::jsonb,
      'queued', now() - interval '1 hour' + i * interval '1 microsecond', now()
    FROM generate_series(${o.from}::int, ${o.from + total - 1}::int) i`.execute(h.db);
  await sql`INSERT INTO sessions (id, task_id, user_id, kind, status, attempt, enqueued_at, claimed_at,
      backend, handle, owner_node, epoch, started_at, updated_at)
    SELECT 'ses_' || md5('s' || i), 'tsk_' || md5('t' || i), ${o.userPrefix} || (i % ${o.users}), 'run',
      CASE WHEN i < ${o.from + o.running} THEN 'running' ELSE 'queued' END, 1,
      now() - interval '1 hour' + i * interval '1 microsecond',
      CASE WHEN i < ${o.from + o.running} THEN now() END,
      CASE WHEN i < ${o.from + o.running} THEN 'simulated' END,
      CASE WHEN i < ${o.from + o.running} THEN 'h' || i END,
      CASE WHEN i < ${o.from + o.running} THEN 'bench-other@boot' END,
      CASE WHEN i < ${o.from + o.running} THEN 1 ELSE 0 END,
      CASE WHEN i < ${o.from + o.running} THEN now() END, now()
    FROM generate_series(${o.from}::int, ${o.from + total - 1}::int) i`.execute(h.db);
}

async function timedRepair(h: DbHandle): Promise<number> {
  const t0 = performance.now();
  await sql`SELECT rt_repair()`.execute(h.db);
  return performance.now() - t0;
}

interface BootResult {
  repairBackfillMs: number[];
  repairSteadyMs: number[];
  createMs: number[];
  firstTickMs: number[];
  bootedMs: number[];
  /** Statements sent between createRuntime and its resolve, in the last run: round trips summed. */
  createQueries: { statement: string; n: number; ms: number }[];
}

async function bootBench(): Promise<BootResult> {
  const db = 'bench_dispatch_boot';
  const url = await createScratch(db);
  const out: BootResult = {
    repairBackfillMs: [],
    repairSteadyMs: [],
    createMs: [],
    firstTickMs: [],
    bootedMs: [],
    createQueries: [],
  };
  try {
    for (let run = 0; run < RUNS; run++) {
      const h = await connect({ databaseUrl: url });
      try {
        if (run === 0) await migrate(h.db);
        await sql`TRUNCATE session_events, session_outputs, sessions, tasks, user_lines, node_heartbeats`.execute(
          h.db,
        );
        await sql`UPDATE dispatch_state SET running = 0, next_join_seq = 0`.execute(h.db);
        await insertRows(h, { ...BOOT, userPrefix: 'u', from: 0 });
        await sql`INSERT INTO node_heartbeats (owner, node_id, started_at, beat_at)
          VALUES ('bench-other@boot', 'bench-other', now(), now() + interval '1 hour')`.execute(
          h.db,
        );
        await sql`ANALYZE`.execute(h.db);
        out.repairBackfillMs.push(await timedRepair(h));
        out.repairSteadyMs.push(await timedRepair(h));
      } finally {
        await h.close();
      }
      const t0 = performance.now();
      const first = nextTick(() => true, 60_000);
      const rec = new Map<string, { n: number; ms: number }>();
      recording = rec;
      const node = await startNode(url, { maxRunning: 20, defaultUserCap: 1 }, () => undefined);
      const created = performance.now();
      recording = undefined;
      out.createQueries = [...rec]
        .map(([statement, e]) => ({ statement, ...e }))
        .sort((a, b) => b.ms - a.ms)
        .slice(0, 6);
      const firstTick = await first;
      await node.runtime.booted;
      const booted = performance.now();
      out.createMs.push(created - t0);
      out.firstTickMs.push(firstTick.answered - t0);
      out.bootedMs.push(booted - t0);
      log(
        `  boot ${run + 1}: repair (backfill) ${out.repairBackfillMs.at(-1)?.toFixed(0)} ms, repair (steady) ${out.repairSteadyMs.at(-1)?.toFixed(0)} ms, createRuntime ${(created - t0).toFixed(0)} ms, first tick ${(firstTick.answered - t0).toFixed(0)} ms, booted ${(booted - t0).toFixed(0)} ms`,
      );
      await node.stop();
    }
  } finally {
    await dropScratch(db);
  }
  return out;
}

interface DownResult {
  reps: number;
  downToGrantMs: number[];
  grantTickMs: number[];
  allTickMs: number[];
}

async function downBench(): Promise<DownResult> {
  const db = 'bench_dispatch_down';
  const url = await createScratch(db);
  const out: DownResult = { reps: DOWN_REPS, downToGrantMs: [], grantTickMs: [], allTickMs: [] };
  try {
    {
      const h = await connect({ databaseUrl: url, poolMax: 1 });
      await migrate(h.db);
      await h.close();
    }
    let starts = 0;
    let onStarted: (() => void) | undefined;
    const node = await startNode(url, { maxRunning: 1, defaultUserCap: 1 }, () => {
      starts++;
      onStarted?.();
    });
    try {
      const started = (n: number): Promise<void> =>
        new Promise((resolve) => {
          if (starts >= n) return resolve();
          onStarted = () => {
            if (starts >= n) resolve();
          };
        });
      // Two users with work, so the next grant is a different session's.
      await Promise.all(
        Array.from({ length: DOWN_REPS + 5 }, (_, i) =>
          node.runtime.submit(`u${i % 2}`, {
            title: `hold ${i}`,
            image: 'bench',
            command: ['bench', `h${i}`, 'hold'],
          }),
        ),
      );
      const tickFrom = ticks.length;
      for (let rep = 0; rep < DOWN_REPS + 3; rep++) {
        await started(rep + 1);
        // Let the runner settle into holding (its handle tick done).
        await new Promise((r) => setTimeout(r, 30));
        const live = node.runtime.liveRunners();
        const id = live[0];
        if (id === undefined || live.length !== 1)
          throw new Error(`expected one live runner, got ${live.length}`);
        const sup = node.runtime.root.childSupervisor('taskRunners');
        if (sup === undefined) throw new Error('no taskRunners supervisor');
        const granted = nextTick((t) => t.granted > 0, 10_000);
        const t0 = performance.now();
        await sup.terminateChild(id);
        const g = await granted;
        if (rep >= 3) {
          out.downToGrantMs.push(g.answered - t0);
          out.grantTickMs.push(g.answered - g.sent);
        }
      }
      out.allTickMs = ticks.slice(tickFrom).map((t) => t.answered - t.sent);
    } finally {
      await node.stop();
    }
  } finally {
    await dropScratch(db);
  }
  return out;
}

interface CpuWindow {
  jobs: number;
  wallMs: number;
  nodeCpuUsPerJob: number;
  rtTickUsPerJob: number;
  ticksPerJob: number;
}
interface CpuResult {
  backlog: number;
  bootMs: number;
  windows: CpuWindow[];
}

async function cpuBench(backlog: number): Promise<CpuResult> {
  const db = `bench_dispatch_cpu_${backlog}`;
  const url = await createScratch(db);
  await trackFunctions(db);
  try {
    {
      const h = await connect({ databaseUrl: url, poolMax: 1 });
      await migrate(h.db);
      await sql`INSERT INTO user_caps (user_id, max_running, updated_at) VALUES ('backlog0', 0, now())`.execute(
        h.db,
      );
      await insertRows(h, {
        queued: backlog,
        running: 0,
        users: 1,
        userPrefix: 'backlog',
        from: 0,
      });
      await sql`ANALYZE`.execute(h.db);
      await sql`SELECT rt_repair()`.execute(h.db);
      await h.close();
    }
    let starts = 0;
    const t0 = performance.now();
    const node = await startNode(url, { maxRunning: 20, defaultUserCap: 1 }, () => {
      starts++;
    });
    await node.runtime.booted;
    const bootMs = performance.now() - t0;
    const out: CpuResult = { backlog, bootMs, windows: [] };
    const stats = new pg.Client({ connectionString: url });
    await stats.connect();
    try {
      const pendingOurs = async (): Promise<number> => {
        const r = await stats.query<{ n: string }>(
          "SELECT count(*) AS n FROM sessions WHERE status IN ('queued', 'running') AND user_id LIKE 'u%'",
        );
        return Number(r.rows[0]?.n ?? 0);
      };
      const rtTickMs = async (): Promise<{ ms: number; calls: number }> => {
        // Function stats are flushed per backend at most once a second and at exit:
        // read them after the pool's backends went idle long enough.
        const f = (await readFunctionTimes(db)).find((x) => x.name === 'rt_tick');
        return { ms: f?.totalMs ?? 0, calls: f?.calls ?? 0 };
      };
      for (let w = 0; w <= RUNS; w++) {
        const jobs = w === 0 ? 500 : CPU_JOBS;
        const keys = Array.from({ length: jobs }, (_, i) => `w${w}k${i}`);
        const startsBefore = starts;
        await new Promise((r) => setTimeout(r, 1_500));
        const f0 = await rtTickMs();
        const ticks0 = ticks.length;
        const c0 = process.cpuUsage();
        const wall0 = performance.now();
        for (let i = 0; i < keys.length; i += SUBMIT_CHUNK)
          await Promise.all(
            keys.slice(i, i + SUBMIT_CHUNK).map((k, j) =>
              node.runtime.submit(`u${(i + j) % 100}`, {
                title: k,
                image: 'bench',
                command: ['bench', k, 'noop'],
              }),
            ),
          );
        while (starts - startsBefore < jobs || (await pendingOurs()) > 0)
          await new Promise((r) => setTimeout(r, 20));
        const wallMs = performance.now() - wall0;
        const c = process.cpuUsage(c0);
        const ticksN = ticks.length - ticks0;
        await new Promise((r) => setTimeout(r, 1_500));
        const f1 = await rtTickMs();
        if (w === 0) continue;
        const win: CpuWindow = {
          jobs,
          wallMs,
          nodeCpuUsPerJob: (c.user + c.system) / jobs,
          rtTickUsPerJob: ((f1.ms - f0.ms) * 1000) / jobs,
          ticksPerJob: ticksN / jobs,
        };
        out.windows.push(win);
        log(
          `  backlog ${backlog}, window ${w}: ${((jobs / wallMs) * 1000).toFixed(0)} jobs/s, node CPU ${win.nodeCpuUsPerJob.toFixed(0)} µs/job, rt_tick ${win.rtTickUsPerJob.toFixed(0)} µs/job, ${win.ticksPerJob.toFixed(3)} ticks/job`,
        );
      }
    } finally {
      await stats.end();
      await node.stop();
    }
    return out;
  } finally {
    await dropScratch(db);
  }
}

const ms = (n: number): string => n.toFixed(1);
const rng = (xs: readonly number[], f: (n: number) => string): string =>
  `${f(Math.min(...xs))}–${f(Math.max(...xs))}`;

export async function run(): Promise<void> {
  const load = { start: loadavg()[0] ?? 0, end: 0 };
  log(`dispatch: boot from ${BOOT.queued} queued + ${BOOT.running} running, ${RUNS} runs`);
  const boot = await bootBench();
  log(`dispatch: DOWN to next grant, ${DOWN_REPS} repetitions`);
  const down = await downBench();
  log(
    `  DOWN to grant p50 ${ms(median(down.downToGrantMs))} ms, p99 ${ms(percentile(down.downToGrantMs, 99))} ms; grant tick p50 ${ms(median(down.grantTickMs))} ms, p99 ${ms(percentile(down.grantTickMs, 99))} ms`,
  );
  log(`dispatch: node CPU per job, ${CPU_JOBS} jobs x ${RUNS} windows, backlog 100 and 100,000`);
  const cpu = [await cpuBench(100), await cpuBench(100_000)];
  load.end = loadavg()[0] ?? 0;

  const L: string[] = [];
  L.push('# Dispatch engine (node side, Postgres server)');
  L.push('');
  L.push(
    "Generated by `npm run bench -- dispatch` (bench/suites/dispatch.bench.ts); what each number times is in the file's header.",
  );
  L.push(
    `Load average (1 min) ${load.start.toFixed(2)} at the start, ${load.end.toFixed(2)} at the end, on 2 cores shared with other work.`,
  );
  L.push('');
  L.push(
    `## Boot from ${BOOT.queued.toLocaleString('en-US')} queued + ${BOOT.running.toLocaleString('en-US')} running (${BOOT.users} users), ${RUNS} runs`,
  );
  L.push('');
  L.push('| measure | median ms | range ms |');
  L.push('|---|---:|---:|');
  const row = (what: string, xs: number[]): void => {
    L.push(`| ${what} | ${ms(median(xs))} | ${rng(xs, ms)} |`);
  };
  row(
    '`rt_repair()` after the bulk insert (renumber 100k turns, rebuild lines)',
    boot.repairBackfillMs,
  );
  row('`rt_repair()` again, rows consistent (the periodic pass)', boot.repairSteadyMs);
  row(
    'createRuntime → resolved (tick and lines read, tree up; the board loads in the background)',
    boot.createMs,
  );
  row('createRuntime → first tick answered', boot.firstTickMs);
  row('createRuntime → `booted` (boot pass done)', boot.bootedMs);
  L.push('');
  L.push(
    'Statements createRuntime waited on before it resolved (last run; round trips summed, so concurrent ones overlap):',
  );
  L.push('');
  L.push('| round trips ms | calls | statement |');
  L.push('|---:|---:|---|');
  for (const q of boot.createQueries)
    L.push(`| ${ms(q.ms)} | ${q.n} | \`${q.statement.replaceAll('|', '\\|')}\` |`);
  L.push('');
  L.push(`## A waiter's DOWN to the next grant (global cap 1), ${down.reps} repetitions`);
  L.push('');
  L.push('| measure | p50 ms | p99 ms | max ms |');
  L.push('|---|---:|---:|---:|');
  const prow = (what: string, xs: number[]): void => {
    L.push(`| ${what} | ${ms(median(xs))} | ${ms(percentile(xs, 99))} | ${ms(Math.max(...xs))} |`);
  };
  prow('terminateChild → reply of the tick that granted the next session', down.downToGrantMs);
  prow('that tick alone (sent → answered)', down.grantTickMs);
  prow('every tick in the run (sent → answered)', down.allTickMs);
  L.push('');
  L.push(
    `p99 DOWN → grant minus p99 of the grant tick: ${ms(percentile(down.downToGrantMs, 99) - percentile(down.grantTickMs, 99))} ms (the target: p99 ≤ one tick + 5 ms).`,
  );
  L.push('');
  L.push(
    `## Node CPU per job with a backlog queued (${CPU_JOBS} no-op jobs per window, ${RUNS} windows)`,
  );
  L.push('');
  L.push(
    '| backlog queued (cap 0) | boot to `booted` ms | jobs/s median (range) | node CPU µs/job median (range) | rt_tick µs/job median (range) | ticks/job |',
  );
  L.push('|---:|---:|---:|---:|---:|---:|');
  for (const c of cpu) {
    const jps = c.windows.map((w) => (w.jobs / w.wallMs) * 1000);
    const cu = c.windows.map((w) => w.nodeCpuUsPerJob);
    const tu = c.windows.map((w) => w.rtTickUsPerJob);
    const tj = c.windows.map((w) => w.ticksPerJob);
    L.push(
      `| ${c.backlog.toLocaleString('en-US')} | ${c.bootMs.toFixed(0)} | ${median(jps).toFixed(0)} (${rng(jps, (n) => n.toFixed(0))}) | ${median(cu).toFixed(0)} (${rng(cu, (n) => n.toFixed(0))}) | ${median(tu).toFixed(0)} (${rng(tu, (n) => n.toFixed(0))}) | ${median(tj).toFixed(3)} |`,
    );
  }
  L.push('');
  L.push(
    "Node CPU is this process (the runtime and the bench's submits; the polls of the progress count are in it too, the same for both backlogs). rt_tick is `pg_stat_user_functions.total_time` (wall time inside the function, its backend's) over the window.",
  );
  writeResults('dispatch', { load, boot, down, cpu }, L.join('\n'));
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
