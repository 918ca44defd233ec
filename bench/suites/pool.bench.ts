/**
 * RunnerPool: in memory, enqueue-grant-release cycles per second and the cost
 * of one dispatch at 1k, 10k and 100k queued sessions over 10,000 users (the
 * dispatch must not grow with the queue). With ROUNDTABLE_BENCH_DATABASE_URL
 * (or the local server) also the database part: see poolDb in this folder.
 */
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
function throughput(queued: number, n: number): number {
  const random = rng(queued + 1);
  const pool = new PoolIndex({ globalMax: 20, perUserMax: 2 });
  let id = 0;
  for (let i = 0; i < queued; i++) pool.enqueue(`u${i % USERS}`, `s${id++}`, i);
  const running: string[] = [];
  for (const [sid, s] of pool.entries()) if (s.state === 'running') running.push(sid);
  const start = process.hrtime.bigint();
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
  return Math.round(n / (Number(process.hrtime.bigint() - start) / 1e9));
}

export async function run(): Promise<void> {
  const results: CycleResult[] = [];
  const plain: { queued: number; cyclesPerSecond: number }[] = [];
  for (const queued of [1_000, 10_000, 100_000]) {
    cycles(queued, 20_000); // warm-up
    const runs = [cycles(queued, 100_000), cycles(queued, 100_000), cycles(queued, 100_000)];
    const pick = runs.sort((a, b) => a.cyclesPerSecond - b.cyclesPerSecond)[1] as CycleResult;
    results.push(pick);
    const tp = [
      throughput(queued, 200_000),
      throughput(queued, 200_000),
      throughput(queued, 200_000),
    ];
    plain.push({ queued, cyclesPerSecond: median(tp) });
  }
  const rows = results.map((r, i) => {
    const p = plain[i] as { cyclesPerSecond: number };
    return `| ${r.queued.toLocaleString('en')} | ${p.cyclesPerSecond.toLocaleString('en')} | ${r.cyclesPerSecond.toLocaleString('en')} | ${r.dispatchMedianUs.toFixed(2)} | ${r.dispatchP99Us.toFixed(2)} | ${r.enqueueMedianUs.toFixed(2)} | ${r.enqueueP99Us.toFixed(2)} |`;
  });
  const md = [
    '# RunnerPool (in memory)',
    '',
    `${USERS.toLocaleString('en')} users, global cap 20, per-user cap 2; each cycle enqueues one`,
    'session for a random user (answering its position) and releases a random slot holder,',
    'which dispatches the next grant. Median of three runs of 100,000 cycles (200,000 untimed).',
    '',
    '| queued | cycles/s | cycles/s (timed ops) | dispatch median µs | dispatch p99 µs | enqueue+position median µs | enqueue p99 µs |',
    '|---|---|---|---|---|---|---|',
    ...rows,
  ].join('\n');
  process.stdout.write(`${md}\n`);
  writeResults('pool', { users: USERS, timed: results, untimed: plain }, md);
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
