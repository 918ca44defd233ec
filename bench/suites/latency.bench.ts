/**
 * Where a lone job's latency goes (issue 15: enqueue → handler start, p50 ≤ 5 ms
 * at 20 jobs/s), on the Postgres server, one scratch database per run
 * (bench/peers/scratchDb.ts). The peers bench measures the total from
 * another process; this suite splits it into stages, observed from outside
 * the runtime so that no mark lives in src/:
 *
 * - **submit → tick sent**: `runtime.submit` called until node-postgres is
 *   handed the `rt_tick` statement that carries the enqueue (a hook on
 *   `pg.Client.prototype.query`, as the dispatch suite counts statements):
 *   the op's validation, the dispatcher's batch, kysely and the pool;
 * - **tick round trip**: that statement handed over (node-postgres writes it
 *   to the socket in that call) until its rows are back, and
 *   beside it the server's own time inside `rt_tick` (mean per call from
 *   `pg_stat_user_functions`, `track_functions = 'pl'`): the rest is the
 *   commit (a WAL flush), the wire and the protocol;
 * - **reply → backend start**: rows back until the backend's `start` is
 *   called: the reply's parse, the board, the TaskRunner's spawn under its
 *   supervisor and its two charts up to `startRun`;
 * - **backend start → exec**: the simulated backend's own work until the
 *   command runs (where the peers bench marks the handler's first line);
 * - **exec → finish committed**: the run's end until the tick carrying its
 *   finish is answered (its slot is free for the next grant then).
 *
 * Beside them, floors measured on the same server after the runtime
 * stopped: a `SELECT 1` round trip through a pg.Pool, an autocommit one-row
 * INSERT (a round trip plus a WAL flush), and a lone job's tick (one enqueue
 * and its grant, as the runtime sends it, through a bare pg.Client) twice:
 * once every 50 ms, as the bench paces its jobs, and back to back. The two
 * differ only in the pace: what the tick costs when the machine was idle
 * before it (wake-ups, cold caches) against what it costs warm.
 *
 * Jobs go one at a time, 20 per second (the peers bench's rate), for 100
 * users (cap 1, global 20), after a warm-up. Knobs: LATENCY_JOBS (200),
 * LATENCY_WARMUP (30), LATENCY_RUNS (3).
 */
import { loadavg } from 'node:os';
import pg from 'pg';
import { createRuntime } from '../../src/actors/runtime.js';
import { SimulatedBackend } from '../../src/containers/simulated/SimulatedBackend.js';
import { SimulatedCluster } from '../../src/containers/simulated/SimulatedCluster.js';
import { connect, migrate } from '../../src/db/index.js';
import { tickPayload } from '../../src/db/tickInput.js';
import {
  createScratch,
  dropScratch,
  readFunctionTimes,
  trackFunctions,
  urlFor,
} from '../peers/scratchDb.js';
import { realClock } from '../peers/systems/roundtableRuntime.js';
import { median, percentile, positiveIntEnv, writeResults } from '../stats.js';
import { noopFinish } from '../tickOps.js';

const env = positiveIntEnv;
const JOBS = env('LATENCY_JOBS', 200);
const WARMUP = env('LATENCY_WARMUP', 30);
const RUNS = env('LATENCY_RUNS', 3);
const GAP_MS = 50;
const JOB_DEADLINE_MS = 10_000;

const STAGES = [
  ['submit → tick sent', 'submit', 'tickSent'],
  ['tick round trip', 'tickSent', 'tickBack'],
  ['reply → backend start', 'tickBack', 'backendStart'],
  ['backend start → exec', 'backendStart', 'exec'],
  ['enqueue → exec (the peers bench total, in process)', 'submit', 'exec'],
  ['exec → finish committed', 'exec', 'finishBack'],
] as const;
type Mark = 'submit' | 'tickSent' | 'tickBack' | 'backendStart' | 'exec' | 'finishBack';

interface RunResult {
  stages: Record<string, number[]>;
  tickServerMs: number;
  ticks: number;
  selectMs: number[];
  insertMs: number[];
  /** A lone job's tick every GAP_MS, and back to back. */
  tickPacedMs: number[];
  tickWarmMs: number[];
}

/** The job in flight: its marks, and what the hooks wait for next. */
interface Current {
  marks: Partial<Record<Mark, number>>;
  sessionId: string | null;
  exec: () => void;
}
let current: Current | null = null;

const pgQuery = pg.Client.prototype.query as (...args: unknown[]) => unknown;
function hookTicks(): () => void {
  const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  proto.query = function (this: unknown, ...args: unknown[]) {
    const text = typeof args[0] === 'string' ? args[0] : '';
    // Marked before the call: node-postgres writes the statement to the
    // socket inside it, and that write is part of the round trip.
    const at = performance.now();
    const out = pgQuery.apply(this, args);
    const job = current;
    if (job === null || !text.includes('rt_tick(') || !(out instanceof Promise)) return out;
    const payload = String((args[1] as unknown[] | undefined)?.[0] ?? '');
    // The enqueue's tick names the job's title; the finish's its session.
    if (job.marks.tickSent === undefined && payload.includes('"enqueues":[{')) {
      job.marks.tickSent = at;
      void out.then(() => {
        job.marks.tickBack ??= performance.now();
      });
    } else if (job.sessionId !== null && payload.includes(`"finishes":[{`)) {
      if (payload.includes(job.sessionId))
        void out.then(() => {
          job.marks.finishBack ??= performance.now();
        });
    }
    return out;
  };
  return () => {
    proto.query = pgQuery;
  };
}

async function floors(url: string, n: number): Promise<{ selectMs: number[]; insertMs: number[] }> {
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  const selectMs: number[] = [];
  const insertMs: number[] = [];
  try {
    await pool.query(
      'create table if not exists bench_floor (id serial primary key, at timestamptz)',
    );
    for (let i = 0; i < n; i++) {
      let t = performance.now();
      await pool.query('select 1');
      selectMs.push(performance.now() - t);
      t = performance.now();
      await pool.query('insert into bench_floor (at) values (now())');
      insertMs.push(performance.now() - t);
      await new Promise((r) => setTimeout(r, GAP_MS / 2));
    }
  } finally {
    await pool.end();
  }
  return { selectMs, insertMs };
}

/**
 * A lone job's tick (one enqueue and its grant) through a bare pg.Client,
 * `n` times every GAP_MS and `n` times back to back; each job's finish
 * follows in a tick of its own (untimed), so the slot is free again.
 */
async function tickFloors(url: string, n: number): Promise<{ paced: number[]; warm: number[] }> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  let k = 0;
  const send = async (ops: object[], want: number) => {
    const payload = tickPayload({
      owner: 'latency-floor@bench',
      now: new Date(),
      globalCap: 20,
      defaultUserCap: 1,
      want,
      ops: ops as never,
    });
    const t0 = performance.now();
    const res = await client.query<{ r: string }>('SELECT rt_tick($1::jsonb)::text AS r', [
      JSON.stringify(payload),
    ]);
    return { ms: performance.now() - t0, reply: JSON.parse(res.rows[0]?.r ?? '{}') };
  };
  const job = async (): Promise<number> => {
    k += 1;
    const id = (kind: string) => `${kind}_f${k.toString(16).padStart(31, '0')}`;
    const { ms, reply } = await send(
      [
        {
          op: 'enqueue',
          ref: 'e',
          taskId: id('tsk'),
          sessionId: id('ses'),
          userId: `floor-${k % 100}`,
          title: `floor ${k}`,
          spec: { image: 'bench', command: ['bench', 'floor'] },
        },
      ],
      1,
    );
    // Rows as arrays (src/db/sql/rowJson.ts): id first, epoch twelfth.
    const row = (reply as { granted?: Array<{ session: unknown[] }> }).granted?.[0]?.session;
    if (row === undefined) throw new Error(`latency floor: tick ${k} granted nothing`);
    await send([noopFinish({ id: String(row[0]), epoch: Number(row[11]) }, 'f')], 0);
    return ms;
  };
  const paced: number[] = [];
  const warm: number[] = [];
  try {
    for (let i = 0; i < n; i++) {
      paced.push(await job());
      await new Promise((r) => setTimeout(r, GAP_MS));
    }
    for (let i = 0; i < n; i++) warm.push(await job());
  } finally {
    await client.end();
  }
  return { paced, warm };
}

async function oneRun(run: number): Promise<RunResult> {
  const name = `rt_bench_latency_${run}`;
  const url = await createScratch(name);
  await trackFunctions(name);
  const h = await connect({ databaseUrl: url });
  const unhook = hookTicks();
  const clock = realClock();
  try {
    await migrate(h.db);
    const cluster = new SimulatedCluster({
      clock,
      nodes: ['sim-1', 'sim-2'],
      commands: {
        bench: () => {
          if (current) {
            current.marks.exec ??= performance.now();
            current.exec();
          }
          return { output: [], durationMs: 0, exitCode: 0 };
        },
      },
    });
    const backend = new SimulatedBackend(cluster);
    const start = backend.start.bind(backend);
    backend.start = (input) => {
      if (current) current.marks.backendStart ??= performance.now();
      return start(input);
    };
    const runtime = await createRuntime({
      db: h.db,
      bootLock: h,
      notifications: h,
      backend,
      clock,
      caps: { maxRunning: 20, defaultUserCap: 1 },
      nodeId: 'bench-latency',
    });
    const stages: Record<string, number[]> = Object.fromEntries(STAGES.map(([s]) => [s, []]));
    for (let i = 0; i < WARMUP + JOBS; i++) {
      let executed!: () => void;
      const ran = new Promise<void>((r) => {
        executed = r;
      });
      const job: Current = { marks: {}, sessionId: null, exec: executed };
      current = job;
      job.marks.submit = performance.now();
      const created = await runtime.submit(`u${i % 100}`, {
        title: `j${i}`,
        image: 'bench',
        command: ['bench', `j${i}`],
      });
      job.sessionId = created.session.id;
      // A job that never runs is a failed bench, not a hang.
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        ran,
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () =>
              reject(new Error(`latency: job j${i} did not start within ${JOB_DEADLINE_MS} ms`)),
            JOB_DEADLINE_MS,
          );
        }),
      ]).finally(() => clearTimeout(timer));
      // The finish rides a tick of its own, answered within the gap.
      await new Promise((r) => setTimeout(r, GAP_MS));
      current = null;
      if (i < WARMUP) continue;
      for (const [stage, from, to] of STAGES) {
        const a = job.marks[from];
        const b = job.marks[to];
        if (a !== undefined && b !== undefined) stages[stage]?.push(b - a);
      }
    }
    await runtime.stop();
    await h.close();
    const fn = (await readFunctionTimes(name)).find((f) => f.name === 'rt_tick');
    const fl = await floors(urlFor(name), JOBS);
    const lone = await tickFloors(urlFor(name), JOBS);
    return {
      stages,
      tickServerMs: fn && fn.calls > 0 ? fn.totalMs / fn.calls : Number.NaN,
      ticks: fn?.calls ?? 0,
      ...fl,
      tickPacedMs: lone.paced,
      tickWarmMs: lone.warm,
    };
  } finally {
    unhook();
    clock.clearAll();
    await dropScratch(name);
  }
}

const fmt = (v: number) => (Number.isFinite(v) ? v.toFixed(2) : 'n/a');

export async function run(): Promise<void> {
  const loadStart = loadavg()[0] ?? 0;
  const runs: RunResult[] = [];
  for (let r = 0; r < RUNS; r++) {
    runs.push(await oneRun(r));
    process.stdout.write(`latency: run ${r + 1} of ${RUNS} done\n`);
  }
  const pooled = (pick: (x: RunResult) => number[]) => runs.flatMap(pick);
  const rows = STAGES.map(([stage]) => {
    const all = pooled((x) => x.stages[stage] ?? []);
    const perRun = runs.map((x) => median(x.stages[stage] ?? []));
    return { stage, n: all.length, p50: median(all), p99: percentile(all, 99), perRun };
  });
  const tickServer = runs.map((x) => x.tickServerMs);
  const select = pooled((x) => x.selectMs);
  const insert = pooled((x) => x.insertMs);
  const paced = pooled((x) => x.tickPacedMs);
  const warm = pooled((x) => x.tickWarmMs);
  const data = {
    jobs: JOBS,
    runs: RUNS,
    rows,
    tickServerMsPerRun: tickServer,
    ticksPerRun: runs.map((x) => x.ticks),
    floors: {
      selectP50: median(select),
      selectP99: percentile(select, 99),
      insertP50: median(insert),
      insertP99: percentile(insert, 99),
      loneTickPacedP50: median(paced),
      loneTickPacedP99: percentile(paced, 99),
      loneTickWarmP50: median(warm),
      loneTickWarmP99: percentile(warm, 99),
    },
    loadavg: { start: loadStart, end: loadavg()[0] ?? 0 },
  };
  const md = [
    '# Where a lone job\u2019s latency goes (Postgres server)',
    '',
    'Generated by `npm run bench -- latency` (bench/suites/latency.bench.ts); what each stage times is in the file\u2019s header.',
    `${JOBS} jobs one at a time every ${GAP_MS} ms (20 jobs/s), 100 users (cap 1, global 20), after ${WARMUP} untimed; ${RUNS} runs, each on a fresh database. Load average (1 min) ${loadStart.toFixed(2)} at the start, ${data.loadavg.end.toFixed(2)} at the end, on 2 shared cores.`,
    '',
    '| stage | p50 ms | p99 ms | p50 per run ms |',
    '|---|---:|---:|---|',
    ...rows.map(
      (r) => `| ${r.stage} | ${fmt(r.p50)} | ${fmt(r.p99)} | ${r.perRun.map(fmt).join(', ')} |`,
    ),
    '',
    `Server time inside \`rt_tick\`, mean per call (every tick of the run: enqueues, handles, finishes): ${tickServer.map(fmt).join(', ')} ms over ${data.ticksPerRun.join(', ')} calls.`,
    '',
    'Floors on the same server after the runtime stopped (a pg.Pool of one connection, a statement every 25 ms; the ticks through a bare pg.Client):',
    '',
    '| statement | p50 ms | p99 ms |',
    '|---|---:|---:|',
    `| \`SELECT 1\` round trip | ${fmt(data.floors.selectP50)} | ${fmt(data.floors.selectP99)} |`,
    `| autocommit one-row INSERT (round trip + WAL flush) | ${fmt(data.floors.insertP50)} | ${fmt(data.floors.insertP99)} |`,
    `| a lone job's tick (one enqueue, its grant), one every ${GAP_MS} ms as the jobs above | ${fmt(data.floors.loneTickPacedP50)} | ${fmt(data.floors.loneTickPacedP99)} |`,
    `| the same tick, back to back | ${fmt(data.floors.loneTickWarmP50)} | ${fmt(data.floors.loneTickWarmP99)} |`,
    '',
    'The two tick rows differ only in the pace: the gap between them is what an idle machine costs a lone tick (its processes waking, its caches cold), which the tick round trip above pays on every job.',
  ].join('\n');
  writeResults('latency', data, md);
  process.stdout.write(`${md}\n`);
}
