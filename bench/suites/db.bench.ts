/**
 * The durable store's throughput, on embedded PGlite (a temp directory, as
 * in production) and on the Postgres server, against `pgbench`'s simple
 * insert rate on the same server as the physical ceiling:
 *
 * - sessions enqueued per second, one by one (one transaction each: task,
 *   session, event), from 1 client and, on the server, 8 clients;
 * - sessions enqueued per second in batches of 1000 (`createTasksWithSessions`);
 * - time to read 100,000 queued rows back in dispatch order (`listQueued`,
 *   validation included).
 *
 * Server URL: ROUNDTABLE_BENCH_DATABASE_URL, else ROUNDTABLE_TEST_DATABASE_URL,
 * else the local server. Each engine run uses a scratch database, dropped after.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import pg from 'pg';
import { connect, type DbHandle } from '../../src/db/connect.js';
import { migrate } from '../../src/db/migrations.js';
import { listQueued } from '../../src/db/sessionQueries.js';
import { createTasksWithSessions, createTaskWithSession, MAX_BATCH } from '../../src/db/tasks.js';
import type { Db } from '../../src/db/transaction.js';
import { admin, SERVER_URL } from '../serverAdmin.js';
import { median, writeResults } from '../stats.js';

const RUNS = 3;
const READ_ROWS = 100_000;
const SPEC = { image: 'busybox:1.36', command: ['sh', '-c', 'sleep 1'] };

interface EngineResult {
  engine: string;
  oneByOnePerSec: number[];
  oneByOne8ClientsPerSec: number[];
  batchedPerSec: number[];
  read100kMs: number[];
  read100kRawMs: number[];
}

let clock = Date.parse('2026-07-14T10:00:00Z');
const tick = () => new Date(clock++);
const input = (n: number) => ({
  userId: `user-${n % 50}`,
  title: `task ${n}`,
  spec: SPEC,
  now: tick(),
});

async function oneByOne(db: Db, count: number, clients: number): Promise<number> {
  const t0 = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (next < count) {
        next++;
        await createTaskWithSession(db, input(next));
      }
    }),
  );
  return count / ((performance.now() - t0) / 1000);
}

async function batched(db: Db, count: number): Promise<number> {
  const t0 = performance.now();
  for (let done = 0; done < count; done += MAX_BATCH) {
    await createTasksWithSessions(
      db,
      Array.from({ length: Math.min(MAX_BATCH, count - done) }, (_, n) => input(done + n)),
    );
  }
  return count / ((performance.now() - t0) / 1000);
}

async function truncate(db: Db): Promise<void> {
  // CASCADE: every table that references sessions (outputs, history) empties with it.
  await sql`TRUNCATE tasks, sessions, session_events RESTART IDENTITY CASCADE`.execute(db);
}

async function measure(
  engine: string,
  handle: DbHandle,
  sizes: { one: number; many: number },
): Promise<EngineResult> {
  const { db } = handle;
  await migrate(db);
  const r: EngineResult = {
    engine,
    oneByOnePerSec: [],
    oneByOne8ClientsPerSec: [],
    batchedPerSec: [],
    read100kMs: [],
    read100kRawMs: [],
  };
  for (let run = 0; run < RUNS; run++) {
    await truncate(db);
    r.oneByOnePerSec.push(await oneByOne(db, sizes.one, 1));
    if (handle.engine === 'postgres') {
      await truncate(db);
      r.oneByOne8ClientsPerSec.push(await oneByOne(db, sizes.many, 8));
    }
    await truncate(db);
    r.batchedPerSec.push(await batched(db, 10_000));
  }
  await truncate(db);
  await batched(db, READ_ROWS);
  for (let run = 0; run < RUNS; run++) {
    const t0 = performance.now();
    const rows = await listQueued(db);
    r.read100kMs.push(performance.now() - t0);
    if (rows.length !== READ_ROWS) throw new Error(`read ${rows.length} rows`);
    // The same query without row validation: what the checks cost.
    const t1 = performance.now();
    const raw = await db
      .selectFrom('sessions')
      .selectAll()
      .where('status', '=', 'queued')
      .orderBy('enqueued_at')
      .orderBy('id')
      .execute();
    r.read100kRawMs.push(performance.now() - t1);
    if (raw.length !== READ_ROWS) throw new Error(`read ${raw.length} raw rows`);
  }
  return r;
}

function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

function pgbenchPath(): string {
  const debian = '/usr/lib/postgresql/15/bin/pgbench';
  return existsSync(debian) ? debian : 'pgbench';
}

/** pgbench: 8 clients, single-row INSERT commits, 10 s, on a scratch database. */
async function pgbenchInsertTps(): Promise<number[]> {
  const name = `roundtable_pgbench_${randomBytes(4).toString('hex')}`;
  const url = withDatabase(SERVER_URL, name);
  await admin(`CREATE DATABASE ${name}`);
  const dir = mkdtempSync(join(tmpdir(), 'roundtable-pgbench-'));
  try {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query('CREATE TABLE ceiling (id bigserial PRIMARY KEY, v text NOT NULL)');
    await client.end();
    const script = join(dir, 'insert.sql');
    writeFileSync(script, "INSERT INTO ceiling (v) VALUES ('x');\n");
    const tps: number[] = [];
    for (let run = 0; run < RUNS; run++) {
      const out = execFileSync(
        pgbenchPath(),
        ['-n', '-c', '8', '-j', '2', '-T', '10', '-f', script, url],
        { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
      );
      const match = /tps = ([\d.]+)/.exec(out);
      if (!match?.[1]) throw new Error(`pgbench: no tps in output:\n${out}`);
      tps.push(Number(match[1]));
    }
    return tps;
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  }
}

export async function run(): Promise<void> {
  const results: EngineResult[] = [];

  const dir = mkdtempSync(join(tmpdir(), 'roundtable-bench-pgdata-'));
  const lite = await connect({ dataDir: dir });
  try {
    results.push(await measure('pglite (disk)', lite, { one: 1000, many: 0 }));
  } finally {
    await lite.close();
    rmSync(dir, { recursive: true, force: true });
  }
  process.stdout.write('pglite done\n');

  const name = `roundtable_bench_${randomBytes(4).toString('hex')}`;
  await admin(`CREATE DATABASE ${name}`);
  const server = await connect({ databaseUrl: withDatabase(SERVER_URL, name), poolMax: 8 });
  try {
    results.push(await measure('postgres server', server, { one: 2000, many: 4000 }));
  } finally {
    await server.close();
    await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  }
  process.stdout.write('server done\n');

  const pgbench = await pgbenchInsertTps();

  const fmt = (xs: number[]) =>
    xs.length === 0 ? 'n/a' : Math.round(median(xs)).toLocaleString('en-US');
  const lines = [
    '# db: enqueue and queue-read throughput',
    '',
    `Medians of ${RUNS} runs. One by one: one atomic statement per session (task + session + event as CTEs).`,
    'Batched: 1000 sessions per statement. Read: `listQueued()` of 100,000 rows, validated.',
    '',
    '| engine | one by one, 1 client (/s) | one by one, 8 clients (/s) | batched (/s) | read 100k queued (ms) | same, unvalidated (ms) |',
    '|---|---|---|---|---|---|',
    ...results.map(
      (r) =>
        `| ${r.engine} | ${fmt(r.oneByOnePerSec)} | ${fmt(r.oneByOne8ClientsPerSec)} | ${fmt(r.batchedPerSec)} | ${fmt(r.read100kMs)} | ${fmt(r.read100kRawMs)} |`,
    ),
    '',
    `Ceiling: pgbench single-row INSERT, 8 clients, same server: ${fmt(pgbench)} tps.`,
  ];
  const markdown = lines.join('\n');
  writeResults('db', { results, pgbenchInsertTps: pgbench }, markdown);
  process.stdout.write(`${markdown}\n`);
}
