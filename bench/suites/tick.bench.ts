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
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import pg from 'pg';
import { connect, type DbHandle } from '../../src/db/connect.js';
import { newId } from '../../src/db/ids.js';
import { migrate } from '../../src/db/migrations.js';
import type { Session } from '../../src/db/rows.js';
import { toSession, toTask } from '../../src/db/rows.js';
import { parseTickReply, tick } from '../../src/db/tick.js';
import { tickPayload } from '../../src/db/tickInput.js';
import { sessionFromJson, taskFromJson } from '../../src/db/tickReply.js';
import type { TickInput, TickOp } from '../../src/db/tickTypes.js';
import { median, writeResults } from '../stats.js';

const RUNS = 3;
const BATCHES = [1, 20, 100] as const;
const TICKS: Record<number, number> = { 1: 400, 20: 150, 100: 50 };
const USERS = 100;
const SPEC = { image: 'busybox:1.36', command: ['true'] };
const SERVER_URL =
  process.env.ROUNDTABLE_BENCH_DATABASE_URL ??
  process.env.ROUNDTABLE_TEST_DATABASE_URL ??
  'postgres://postgres@127.0.0.1:5432/postgres';

interface BatchResult {
  batch: number;
  ticksPerSec: number[];
  usPerJob: number[];
}

let n = 0;
const enqueue = (): TickOp => ({
  op: 'enqueue',
  ref: `e${++n}`,
  taskId: newId('task'),
  sessionId: newId('session'),
  userId: `user-${n % USERS}`,
  title: `job ${n}`,
  spec: SPEC,
});
const finish = (s: Session): TickOp => ({
  op: 'finish',
  ref: `f${++n}`,
  sessionId: s.id,
  epoch: s.epoch,
  status: 'succeeded',
  exitCode: 0,
  reason: null,
  userRecoverable: false,
  output: null,
  column: 'done',
  requeue: null,
});

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
  const payload = JSON.stringify(tickPayload(input(batch, ops)));
  const { rows } = await sql<{ r: unknown }>`SELECT rt_tick(${payload}::jsonb) AS r`.execute(h.db);
  const reply = rows[0]?.r;
  const parsed = parseTickReply(reply);
  const pairs = (
    reply as { granted: { session: Record<string, unknown>; task: Record<string, unknown> }[] }
  ).granted;
  if (parsed.granted.length !== batch) throw new Error(`granted ${parsed.granted.length}`);
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
      for (const p of pairs) {
        sessionFromJson(p.session);
        taskFromJson(p.task);
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

async function admin(statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: SERVER_URL, connectionTimeoutMillis: 10_000 });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

export async function run(): Promise<void> {
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
  const name = `roundtable_bench_${randomBytes(4).toString('hex')}`;
  await admin(`CREATE DATABASE ${name}`);
  const u = new URL(SERVER_URL);
  u.pathname = `/${name}`;
  const server = await connect({ databaseUrl: u.toString(), poolMax: 2 });
  try {
    results.push({ engine: 'postgres server', batches: await measure('server', server) });
  } finally {
    await server.close();
    await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  }

  const f = (xs: number[], d = 0) => median(xs).toFixed(d);
  const lines = [
    '# tick: one dispatch tick per statement',
    '',
    `Steady state, medians of ${RUNS} runs: each tick finishes the previous tick's B grants, enqueues B`,
    `and grants B (${USERS} users, cap 1 each, global cap B), so one tick = B complete jobs, one commit.`,
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
  ];
  const markdown = lines.join('\n');
  writeResults('tick', { results, js }, markdown);
  process.stdout.write(`${markdown}\n`);
}
