/**
 * RunnerPool: in memory, enqueue-grant-release cycles per second and the cost
 * of one dispatch at 1k, 10k and 100k queued sessions over 10,000 users (the
 * dispatch must not grow with the queue). With ROUNDTABLE_BENCH_DATABASE_URL
 * (or the local server) also the database part: see poolDb in this folder.
 */
import { loadavg } from 'node:os';
import { sql } from 'kysely';
import pg from 'pg';
import { createActor, setup, waitFor } from 'xstate';
import { startRunnerPool } from '../../src/actors/runnerPoolClient.js';
import { dbPoolStore } from '../../src/actors/runnerPoolStore.js';
import { claimWithinCaps } from '../../src/db/claimWithinCaps.js';
import { connect } from '../../src/db/connect.js';
import { migrate } from '../../src/db/migrations.js';
import { finish } from '../../src/db/sessionTransitions.js';
import { createTaskWithSession } from '../../src/db/tasks.js';
import { PoolIndex } from '../../src/machines/poolIndex.js';
import { median, percentile, writeResults } from '../stats.js';

const USERS = 10_000;

interface CycleResult {
  queued: number;
  cyclesPerSecond: number;
  dispatchMedianUs: number;
  dispatchP99Us: number;
  enqueueMedianUs: number;
  enqueueP99Us: number;
}

/** A deterministic generator so every run sees the same workload. */
function rng(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 4294967296;
  };
}

function cycles(queued: number, n: number): CycleResult {
  const random = rng(queued);
  // Every user at their cap most of the time: the case where a naive
  // dispatch scans everyone.
  const pool = new PoolIndex({ globalMax: 20, perUserMax: 2 });
  let id = 0;
  let t = 0;
  for (let i = 0; i < queued; i++) pool.enqueue(`u${i % USERS}`, `s${id++}`, t++);
  const running: string[] = [];
  for (const [sid, s] of pool.entries()) if (s.state === 'running') running.push(sid);

  const dispatch: number[] = [];
  const enqueue: number[] = [];
  const start = process.hrtime.bigint();
  for (let i = 0; i < n; i++) {
    const user = `u${Math.floor(random() * USERS)}`;
    const t0 = process.hrtime.bigint();
    const r = pool.enqueue(user, `s${id++}`, t++);
    const t1 = process.hrtime.bigint();
    for (const g of r.grants) running.push(g.sessionId);
    // Release a random slot holder; the release dispatches the next grant.
    const k = Math.floor(random() * running.length);
    const victim = running[k] as string;
    running[k] = running[running.length - 1] as string;
    running.pop();
    const t2 = process.hrtime.bigint();
    const grants = pool.release(victim, t++);
    const t3 = process.hrtime.bigint();
    for (const g of grants) running.push(g.sessionId);
    enqueue.push(Number(t1 - t0) / 1e3);
    dispatch.push(Number(t3 - t2) / 1e3);
  }
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  if (pool.queuedCount < queued - 40)
    throw new Error('bench: the queue drained; workload is wrong');
  return {
    queued,
    cyclesPerSecond: Math.round(n / seconds),
    dispatchMedianUs: median(dispatch),
    dispatchP99Us: percentile(dispatch, 99),
    enqueueMedianUs: median(enqueue),
    enqueueP99Us: percentile(enqueue, 99),
  };
}

/** Cycles without per-operation timers, for the throughput number alone. */
/** Cycles per wall-clock second and per CPU second (the machine is shared: load is high). */
function throughput(queued: number, n: number): { wall: number; cpu: number } {
  const random = rng(queued + 1);
  const pool = new PoolIndex({ globalMax: 20, perUserMax: 2 });
  let id = 0;
  for (let i = 0; i < queued; i++) pool.enqueue(`u${i % USERS}`, `s${id++}`, i);
  const running: string[] = [];
  for (const [sid, s] of pool.entries()) if (s.state === 'running') running.push(sid);
  const start = process.hrtime.bigint();
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < n; i++) {
    for (const g of pool.enqueue(`u${Math.floor(random() * USERS)}`, `s${id++}`, i).grants) {
      running.push(g.sessionId);
    }
    const k = Math.floor(random() * running.length);
    const victim = running[k] as string;
    running[k] = running[running.length - 1] as string;
    running.pop();
    for (const g of pool.release(victim, i)) running.push(g.sessionId);
  }
  const cpu = process.cpuUsage(cpu0);
  return {
    wall: Math.round(n / (Number(process.hrtime.bigint() - start) / 1e9)),
    cpu: Math.round(n / ((cpu.user + cpu.system) / 1e6)),
  };
}

const SERVER =
  process.env.ROUNDTABLE_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const SCRATCH = 'roundtable_bench_pool';

async function admin(statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: SERVER, connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

interface DbResult {
  rebuildMs: number[];
  loadMs: number[];
  enqueueToGrantMs: number[];
  enqueueToClaimMs: number[];
}

/** Rebuild from 100,000 queued + 1,000 running rows; durable enqueue-to-grant latency. */
async function database(): Promise<DbResult> {
  await admin(`DROP DATABASE IF EXISTS ${SCRATCH} WITH (FORCE)`);
  await admin(`CREATE DATABASE ${SCRATCH}`);
  const url = new URL(SERVER);
  url.pathname = `/${SCRATCH}`;
  const handle = await connect({ databaseUrl: url.toString() });
  try {
    await migrate(handle.db);
    const { db } = handle;
    await sql
      .raw(`INSERT INTO tasks (id, user_id, title, run_spec, board_column, created_at, updated_at)
          SELECT 'tsk_' || md5('t' || g), 'u' || (g % 10000), 't', '{"image":"busybox","command":["true"]}',
            'backlog', now(), now() FROM generate_series(1, 101000) g`)
      .execute(db);
    await sql
      .raw(`INSERT INTO sessions (id, task_id, user_id, kind, status, attempt, enqueued_at, claimed_at,
            owner_node, epoch, updated_at)
          SELECT 'ses_' || md5('s' || g), 'tsk_' || md5('t' || g), 'u' || (g % 10000), 'run',
            CASE WHEN g <= 1000 THEN 'running' ELSE 'queued' END, 1,
            now() - interval '1 hour' + g * interval '1 ms',
            CASE WHEN g <= 1000 THEN now() END, CASE WHEN g <= 1000 THEN 'bench' END, 1, now()
          FROM generate_series(1, 101000) g`)
      .execute(db);
    const store = dbPoolStore(db);
    const rebuildMs: number[] = [];
    const loadMs: number[] = [];
    for (let i = 0; i < 6; i++) {
      const t0 = performance.now();
      await store.loadRows();
      loadMs.push(performance.now() - t0);
      const t1 = performance.now();
      const { pool, actor } = startRunnerPool(store, {
        caps: { globalMax: 20, perUserMax: 2 },
        now: Date.now,
      });
      await waitFor(actor, (s) => s.value === 'ready', { timeout: 30_000 });
      rebuildMs.push(performance.now() - t1);
      if (pool.snapshot().totals.queued !== 100_000) throw new Error('bench: rebuild lost rows');
      pool.close();
      actor.stop();
    }

    // Latency on an idle pool: a durable queued row, the grant, the durable claim.
    await db.deleteFrom('session_events').execute();
    await db.deleteFrom('sessions').execute();
    await db.deleteFrom('tasks').execute();
    const { pool, actor } = startRunnerPool(store, {
      caps: { globalMax: 20, perUserMax: 2 },
      now: Date.now,
    });
    await waitFor(actor, (s) => s.value === 'ready', { timeout: 30_000 });
    const enqueueToGrantMs: number[] = [];
    const enqueueToClaimMs: number[] = [];
    for (let i = 0; i < 400; i++) {
      let granted = 0;
      const waiter = createActor(
        setup({}).createMachine({
          on: {
            runner_slot: {
              actions: () => {
                granted = performance.now();
              },
            },
          },
        }),
      ).start();
      const t0 = performance.now();
      const { session } = await createTaskWithSession(db, {
        userId: `u${i % 50}`,
        title: 't',
        spec: { image: 'busybox', command: ['true'] },
        now: new Date(),
      });
      if (pool.enqueue(session.userId, session.id, waiter) !== 0 || granted === 0) {
        throw new Error('bench: an idle pool must grant at once');
      }
      const claimed = await claimWithinCaps(db, {
        owner: 'bench',
        now: new Date(),
        globalCap: 20,
        defaultUserCap: 2,
        sessionId: session.id,
      });
      if (claimed.kind !== 'claimed') throw new Error(`bench: claim ${claimed.kind}`);
      const t2 = performance.now();
      if (i >= 50) {
        enqueueToGrantMs.push(granted - t0);
        enqueueToClaimMs.push(t2 - t0);
      }
      await finish(db, {
        sessionId: session.id,
        epoch: claimed.session.epoch,
        status: 'succeeded',
        exitCode: 0,
        now: new Date(),
      });
      pool.release(session.id);
      waiter.stop();
    }
    pool.close();
    actor.stop();
    return { rebuildMs, loadMs, enqueueToGrantMs, enqueueToClaimMs };
  } finally {
    await handle.close();
    await admin(`DROP DATABASE IF EXISTS ${SCRATCH} WITH (FORCE)`);
  }
}

export async function run(): Promise<void> {
  const results: CycleResult[] = [];
  const plain: { queued: number; cyclesPerSecond: number; cyclesPerCpuSecond: number }[] = [];
  // BENCH_POOL_PART=db or =memory runs one half (the other is reported as skipped).
  const part = process.env.BENCH_POOL_PART;
  for (const queued of part === 'db' ? [] : [1_000, 10_000, 100_000]) {
    cycles(queued, 20_000); // warm-up
    const runs = [cycles(queued, 100_000), cycles(queued, 100_000), cycles(queued, 100_000)];
    const pick = runs.sort((a, b) => a.cyclesPerSecond - b.cyclesPerSecond)[1] as CycleResult;
    results.push(pick);
    const tp = [
      throughput(queued, 200_000),
      throughput(queued, 200_000),
      throughput(queued, 200_000),
    ];
    plain.push({
      queued,
      cyclesPerSecond: median(tp.map((x) => x.wall)),
      cyclesPerCpuSecond: median(tp.map((x) => x.cpu)),
    });
  }
  const rows = results.map((r, i) => {
    const p = plain[i] as { cyclesPerSecond: number; cyclesPerCpuSecond: number };
    return `| ${r.queued.toLocaleString('en')} | ${p.cyclesPerSecond.toLocaleString('en')} | ${p.cyclesPerCpuSecond.toLocaleString('en')} | ${r.cyclesPerSecond.toLocaleString('en')} | ${r.dispatchMedianUs.toFixed(2)} | ${r.dispatchP99Us.toFixed(2)} | ${r.enqueueMedianUs.toFixed(2)} | ${r.enqueueP99Us.toFixed(2)} |`;
  });
  const md = [
    '# RunnerPool (in memory)',
    '',
    `${USERS.toLocaleString('en')} users, global cap 20, per-user cap 2; each cycle enqueues one`,
    'session for a random user (answering its position) and releases a random slot holder,',
    'which dispatches the next grant. Median of three runs of 100,000 cycles (200,000 untimed).',
    `Load average at the start: ${loadavg()[0]?.toFixed(1)} on 2 cores (shared machine): per-CPU-second`,
    'figures are what one idle core would do.',
    '',
    '| queued | cycles/s | cycles per CPU-s | cycles/s (timed ops) | dispatch median µs | dispatch p99 µs | enqueue+position median µs | enqueue p99 µs |',
    '|---|---|---|---|---|---|---|---|',
    ...rows,
  ].join('\n');
  let db: DbResult | { skipped: string };
  let dbMd: string;
  try {
    if (part === 'memory') throw new Error('BENCH_POOL_PART=memory');
    const d = await database();
    db = d;
    const f = (v: number[]) => `${median(v).toFixed(1)} / ${percentile(v, 99).toFixed(1)}`;
    dbMd = [
      '',
      '## On the Postgres server',
      '',
      '| measure | median / p99 ms |',
      '|---|---|',
      `| boot rebuild from 100,000 queued + 1,000 running rows (load + index) | ${f(d.rebuildMs)} |`,
      `| of which loading the rows | ${f(d.loadMs)} |`,
      `| durable enqueue (row insert) to grant | ${f(d.enqueueToGrantMs)} |`,
      `| durable enqueue to committed claim (row running) | ${f(d.enqueueToClaimMs)} |`,
    ].join('\n');
  } catch (error) {
    db = { skipped: String(error) };
    dbMd = `\n## On the Postgres server\n\nskipped: ${String(error)}`;
  }
  process.stdout.write(`${md}${dbMd}\n`);
  writeResults('pool', { users: USERS, timed: results, untimed: plain, db }, `${md}\n${dbMd}`);
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
