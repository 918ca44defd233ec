/**
 * The dispatch tick's own cost (`tick` in src/db, `rt_tick` in SQL), on
 * embedded PGlite (a temp directory) and on the Postgres server: a steady
 * state where every tick carries B finishes (the previous tick's grants),
 * B enqueues and asks for B grants, over 100 users with a cap of 1 each and
 * a global cap of B. So one tick is B complete jobs: ticks/s, and µs of wall
 * time per job. Also the node's JS per job: building the payload and
 * parsing the reply (the lean checked parser against zod row schemas).
 *
 * Server URL: ROUNDTABLE_BENCH_DATABASE_URL, else ROUNDTABLE_TEST_DATABASE_URL,
 * else the local server. Each engine run uses a scratch database, dropped after.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { connect, type DbHandle } from '../../src/db/connect.js';
import { newId } from '../../src/db/ids.js';
import { migrate } from '../../src/db/migrations.js';
import type { Session } from '../../src/db/rows.js';
import { toSession, toTask } from '../../src/db/rows.js';
import { tick } from '../../src/db/tick.js';
import { tickPayload } from '../../src/db/tickInput.js';
import { sessionFromJson, taskFromJson } from '../../src/db/tickReply.js';
import type { TickInput, TickOp } from '../../src/db/tickTypes.js';
import { scratchDatabase } from '../serverAdmin.js';
import { median, writeResults } from '../stats.js';
import { noopFinish } from '../tickOps.js';

const RUNS = 3;
const loadavgCpus = () => availableParallelism();
const BATCHES = [1, 20, 100, 500] as const;
const TICKS: Record<number, number> = { 1: 400, 20: 150, 100: 50, 500: 12 };
const USERS = 100;
/** Users of the steady state: B of them when B > 100, so that every tick can grant B (cap 1 each). */
let users = USERS;
const SPEC = { image: 'busybox:1.36', command: ['true'] };

interface BatchResult {
  batch: number;
  ticksPerSec: number[];
  usPerJob: number[];
}

let n = 0;
/** Whether each enqueue carries a fresh submission key (the "Submission keys" section). */
let keyed = false;
const enqueue = (): TickOp => ({
  op: 'enqueue',
  ref: `e${++n}`,
  taskId: newId('task'),
  sessionId: newId('session'),
  userId: `user-${n % users}`,
  title: `job ${n}`,
  spec: SPEC,
  ...(keyed ? { key: `order-${n}` } : {}),
});
const finish = (s: Session): TickOp => noopFinish(s, `f${++n}`);

function input(batch: number, ops: TickOp[]): TickInput {
  return {
    owner: 'bench@b',
    now: new Date(),
    globalCap: batch,
    defaultUserCap: 1,
    want: batch,
    ops,
  };
}

/** `ticks` steady-state ticks of `batch` jobs each; returns [ticks/s, µs per job]. */
async function steady(h: DbHandle, batch: number, ticks: number): Promise<[number, number]> {
  users = Math.max(USERS, batch);
  let held: Session[] = [];
  const step = async () => {
    const ops = [...held.map(finish), ...Array.from({ length: batch }, enqueue)];
    held = (await tick(h.db, input(batch, ops))).granted.map((g) => g.session);
  };
  for (let i = 0; i < 10; i++) await step();
  const t0 = performance.now();
  for (let i = 0; i < ticks; i++) await step();
  const ms = performance.now() - t0;
  await tick(h.db, input(batch, held.map(finish)));
  return [ticks / (ms / 1000), (ms * 1000) / (ticks * batch)];
}

async function measure(engine: string, h: DbHandle): Promise<BatchResult[]> {
  await migrate(h.db);
  const out: BatchResult[] = [];
  for (const batch of BATCHES) {
    const r: BatchResult = { batch, ticksPerSec: [], usPerJob: [] };
    for (let run = 0; run < RUNS; run++) {
      const [tps, us] = await steady(h, batch, TICKS[batch] ?? 100);
      r.ticksPerSec.push(tps);
      r.usPerJob.push(us);
    }
    process.stdout.write(`${engine} B=${batch}: ${median(r.usPerJob).toFixed(0)} µs/job\n`);
    out.push(r);
  }
  return out;
}

/** The node's JS per job: payload build, and the reply parse lean vs zod. */
async function jsCost(h: DbHandle) {
  const batch = 100;
  const ops = Array.from({ length: batch }, enqueue);
  const payloadUs: number[] = [];
  for (let run = 0; run < 5; run++) {
    const t0 = performance.now();
    for (let i = 0; i < 50; i++) tickPayload(input(batch, ops));
    payloadUs.push(((performance.now() - t0) * 1000) / (50 * batch));
  }
  type Pair = { session: unknown; task: unknown };
  // The reply as this version asks for it (rows as arrays, for the lean
  // parser), then as an older node gets it (objects, for the zod schemas);
  // the second tick finishes the first one's grants so it can grant again.
  const rawTick = async (tickOps: TickOp[], arrays: boolean): Promise<Pair[]> => {
    const { rows: arrayRows, ...objects } = tickPayload(input(batch, tickOps));
    const payload = JSON.stringify(arrays ? { ...objects, rows: arrayRows } : objects);
    const { rows } = await sql<{ r: unknown }>`SELECT rt_tick(${payload}::jsonb) AS r`.execute(
      h.db,
    );
    const reply = rows[0]?.r as { granted: Pair[] };
    if (reply.granted.length !== batch) throw new Error(`granted ${reply.granted.length}`);
    return reply.granted;
  };
  const arrayPairs = await rawTick(ops, true);
  const held = arrayPairs.map((p) => sessionFromJson(p.session));
  const pairs = (await rawTick(
    [...held.map(finish), ...Array.from({ length: batch }, enqueue)],
    false,
  )) as { session: Record<string, unknown>; task: Record<string, unknown> }[];
  const dates = (o: Record<string, unknown>) =>
    Object.fromEntries(
      Object.entries(o).map(([k, v]) => [
        k,
        k.endsWith('_at') && typeof v === 'string' ? new Date(v) : v,
      ]),
    );
  const leanUs: number[] = [];
  const zodUs: number[] = [];
  for (let run = 0; run < 5; run++) {
    let t0 = performance.now();
    for (let i = 0; i < 50; i++)
      for (const p of arrayPairs) {
        sessionFromJson(p.session);
        taskFromJson(p.task, null);
      }
    leanUs.push(((performance.now() - t0) * 1000) / (50 * batch));
    t0 = performance.now();
    for (let i = 0; i < 50; i++)
      for (const p of pairs) {
        toSession(dates(p.session));
        toTask(dates(p.task));
      }
    zodUs.push(((performance.now() - t0) * 1000) / (50 * batch));
  }
  return {
    payloadUsPerJob: median(payloadUs),
    leanParseUsPerJob: median(leanUs),
    zodParseUsPerJob: median(zodUs),
  };
}

const KEY_ROUNDS = 5;
const KEY_BATCHES = [20, 500] as const;

/**
 * Steady ticks with and without a submission key on every enqueue, in
 * interleaved rounds on one database: what a key costs the tick (its
 * lookup by user and key, the window over the tick's keyed enqueues, the
 * unique index's entry), µs per job.
 */
async function keyCost(h: DbHandle): Promise<Record<string, { plain: number[]; keyed: number[] }>> {
  const out: Record<string, { plain: number[]; keyed: number[] }> = {};
  for (const batch of KEY_BATCHES) out[batch] = { plain: [], keyed: [] };
  for (let round = 0; round < KEY_ROUNDS; round++) {
    for (const batch of KEY_BATCHES) {
      const order = round % 2 === 0 ? [false, true] : [true, false];
      for (const k of order) {
        keyed = k;
        const [, us] = await steady(h, batch, TICKS[batch] ?? 100);
        out[batch]?.[k ? 'keyed' : 'plain'].push(us);
      }
    }
  }
  keyed = false;
  return out;
}

const COST_BATCH = 20;
const COST_TICKS = 150;

interface ServerCost {
  /** Rows inserted + updated + deleted per job, by table (pg_stat_user_tables deltas). */
  tuplesPerJob: Record<string, number>;
  hotUpdatesPerJob: Record<string, number>;
  /** CPU of the tick's backend per job (/proc/<pid>/stat; null when the server is not local). */
  backendCpuUsPerJob: number | null;
  /** pg_stat_database.xact_commit delta per job, the bench's own stats reads subtracted. */
  commitsPerJob: number;
  /** Statements the bench sent per job (tick() sends one per tick). */
  statementsPerJob: number;
}

/** The backend's user + system CPU in µs, or null when its /proc entry is not readable. */
function backendCpuUs(pid: number): number | null {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    return (Number(fields[11]) + Number(fields[12])) * 10_000;
  } catch {
    return null;
  }
}

/**
 * What one job writes and costs the server's backend, at B = COST_BATCH:
 * the tuple counts are exact (not timing), so they compare across loads.
 */
async function serverCost(url: string): Promise<ServerCost> {
  const h = await connect({ databaseUrl: url, poolMax: 1 });
  type Stat = { relname: string; w: string; hot: string; commits: string };
  const stats = async () => {
    // Stats are flushed by a backend at most once a second, after a transaction.
    await new Promise((r) => setTimeout(r, 1100));
    await sql`SELECT 1`.execute(h.db);
    await new Promise((r) => setTimeout(r, 1100));
    await sql`SELECT pg_stat_clear_snapshot()`.execute(h.db);
    const { rows } = await sql<Stat>`SELECT relname, n_tup_ins + n_tup_upd + n_tup_del AS w,
      n_tup_hot_upd AS hot, (SELECT xact_commit FROM pg_stat_database
        WHERE datname = current_database()) AS commits FROM pg_stat_user_tables`.execute(h.db);
    return new Map(rows.map((r) => [r.relname, r]));
  };
  try {
    await steady(h, COST_BATCH, 20);
    const { rows } = await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(h.db);
    const pid = rows[0]?.pid ?? 0;
    const s0 = await stats();
    const c0 = backendCpuUs(pid);
    await steady(h, COST_BATCH, COST_TICKS);
    const c1 = backendCpuUs(pid);
    const s1 = await stats();
    // steady() runs COST_TICKS + 11 ticks (10 warm-up, one to drain).
    const jobs = (COST_TICKS + 11) * COST_BATCH;
    const tuplesPerJob: Record<string, number> = {};
    const hotUpdatesPerJob: Record<string, number> = {};
    for (const [name, r] of s1) {
      const w = (Number(r.w) - Number(s0.get(name)?.w ?? 0)) / jobs;
      if (w > 0) tuplesPerJob[name] = w;
      const hot = (Number(r.hot) - Number(s0.get(name)?.hot ?? 0)) / jobs;
      if (hot > 0) hotUpdatesPerJob[name] = hot;
    }
    const backendCpuUsPerJob = c0 === null || c1 === null ? null : (c1 - c0) / jobs;
    const commitsOf = (m: Map<string, Stat>) => Number([...m.values()][0]?.commits ?? 0);
    // Between the two reads: the first read's own commit and the second's
    // two round trips (SELECT 1, pg_stat_clear_snapshot) are the bench's.
    const commitsPerJob = (commitsOf(s1) - commitsOf(s0) - 3) / jobs;
    return {
      tuplesPerJob,
      hotUpdatesPerJob,
      backendCpuUsPerJob,
      commitsPerJob,
      statementsPerJob: (COST_TICKS + 11) / jobs,
    };
  } finally {
    await h.close();
  }
}

export async function run(): Promise<void> {
  const loadStart = loadavg()[0] ?? 0;
  const results: { engine: string; batches: BatchResult[] }[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'roundtable-bench-tick-'));
  const lite = await connect({ dataDir: dir });
  let js: Awaited<ReturnType<typeof jsCost>>;
  try {
    results.push({ engine: 'pglite (disk)', batches: await measure('pglite', lite) });
    js = await jsCost(lite);
  } finally {
    await lite.close();
    rmSync(dir, { recursive: true, force: true });
  }
  const { url, drop } = await scratchDatabase();
  const server = await connect({ databaseUrl: url, poolMax: 2 });
  let cost: ServerCost;
  let keys: Awaited<ReturnType<typeof keyCost>>;
  try {
    results.push({ engine: 'postgres server', batches: await measure('server', server) });
    cost = await serverCost(url);
    keys = await keyCost(server);
  } finally {
    await server.close();
    await drop();
  }

  const loadEnd = loadavg()[0] ?? 0;
  const f = (xs: number[], d = 0) => median(xs).toFixed(d);
  const total = Object.values(cost.tuplesPerJob).reduce((a, b) => a + b, 0);
  const perTable = Object.entries(cost.tuplesPerJob)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([t, n]) => {
      const hot = cost.hotUpdatesPerJob[t];
      return `| ${t} | ${n.toFixed(2)} | ${hot === undefined ? '' : hot.toFixed(2)} |`;
    });
  const lines = [
    '# tick: one dispatch tick per statement',
    '',
    `Steady state, medians of ${RUNS} runs: each tick finishes the previous tick's B grants, enqueues B`,
    `and grants B (${USERS} users, B of them when B > ${USERS}; cap 1 each, global cap B), so one tick = B complete jobs, one commit.`,
    'The cost per job should not grow with B: a tick is linear in its ops.',
    '',
    '| engine | B | ticks/s | µs per job | jobs/s |',
    '|---|---:|---:|---:|---:|',
    ...results.flatMap((r) =>
      r.batches.map(
        (b) =>
          `| ${r.engine} | ${b.batch} | ${f(b.ticksPerSec)} | ${f(b.usPerJob)} | ${Math.round(1e6 / median(b.usPerJob)).toLocaleString('en-US')} |`,
      ),
    ),
    '',
    `Node JS per job (B = 100): payload build ${js.payloadUsPerJob.toFixed(1)} µs; reply parse ` +
      `${js.leanParseUsPerJob.toFixed(1)} µs per session+task with the lean checked parser, ` +
      `${js.zodParseUsPerJob.toFixed(1)} µs with the zod row schemas (dates converted first).`,
    '',
    `What one job writes on the server (B = ${COST_BATCH}, ${COST_TICKS} steady ticks; pg_stat_user_tables`,
    'deltas, exact whatever the load): rows inserted + updated + deleted per job, and of the updates how many',
    'were HOT (no index entries).',
    '',
    '| table | rows written per job | of which HOT updates |',
    '|---|---:|---:|',
    ...perTable,
    `| **total** | **${total.toFixed(2)}** | |`,
    '',
    cost.backendCpuUsPerJob === null
      ? 'Backend CPU per job: not measured (the server is not on this machine).'
      : `Backend CPU per job (the tick's server process, user + system, /proc): ${cost.backendCpuUsPerJob.toFixed(0)} µs.`,
    '',
    `Statements per job: ${cost.statementsPerJob.toFixed(3)} (one \`SELECT rt_tick\` per tick); commits per job: ${cost.commitsPerJob.toFixed(3)} (pg_stat_database.xact_commit delta).`,
    '',
    `Submission keys (migration 23), on the server: the steady state with every enqueue keyed (a fresh key each) against none, ${KEY_ROUNDS} interleaved rounds, medians, µs per job:`,
    '',
    '| B | no keys | every enqueue keyed | ratio |',
    '|---:|---:|---:|---:|',
    ...KEY_BATCHES.map((b) => {
      const k = keys[b] ?? { plain: [], keyed: [] };
      return `| ${b} | ${f(k.plain)} | ${f(k.keyed)} | ${(median(k.keyed) / median(k.plain)).toFixed(2)} |`;
    }),
    '',
    `Load average (1 min) at start / end: ${loadStart.toFixed(1)} / ${loadEnd.toFixed(1)}, on ${loadavgCpus()} CPUs: wall times scale with it, the row counts do not.`,
  ];
  const markdown = lines.join('\n');
  writeResults(
    'tick',
    { results, js, cost, keys, load: { start: loadStart, end: loadEnd } },
    markdown,
  );
  process.stdout.write(`${markdown}\n`);
}
