/**
 * What finished work costs a node, and what retention (migration 21,
 * src/db/pruneFinished.ts) costs the store: a history of finished tasks
 * (each with its attempt, three history rows and a 20-line stored output,
 * ended 30 days ago) written with SQL, then
 *
 * - **kept** (`retentionMs: null`, every node before retention): a fresh
 *   runtime's time from `createRuntime` to `booted` (the board's load and
 *   the tails of the finished cards' outputs), the heap it keeps after a
 *   full GC, and one `cards(null)` (every snapshot of a WebSocket
 *   subscribe reads it);
 * - **past retention** (the default, 7 days): the same boot over the same
 *   rows before the Reconciler prunes them (the board skips them);
 * - **the prune**: `pruneFinished` batches of the Reconciler's size
 *   (PRUNE_BATCH) over the whole history, each batch's time being how long
 *   it holds the lock every tick waits for.
 *
 * Server URL: ROUNDTABLE_BENCH_DATABASE_URL, else ROUNDTABLE_TEST_DATABASE_URL,
 * else the local server; a scratch database, dropped after. HISTORY_TASKS
 * sets the history (default 100,000); medians of HISTORY_RUNS boots (3).
 */
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { sql } from 'kysely';
import { createRuntime } from '../../src/actors/runtime.js';
import { SimulatedBackend } from '../../src/containers/simulated/SimulatedBackend.js';
import { SimulatedCluster } from '../../src/containers/simulated/SimulatedCluster.js';
import { connect, type DbHandle, migrate, PRUNE_BATCH, pruneFinished } from '../../src/db/index.js';
import { realClock } from '../peers/systems/roundtableRuntime.js';
import { scratchDatabase } from '../serverAdmin.js';
import { median, percentile, positiveIntEnv, writeResults } from '../stats.js';

const TASKS = positiveIntEnv('HISTORY_TASKS', 100_000);
const RUNS = positiveIntEnv('HISTORY_RUNS', 3);
const DAY = 24 * 60 * 60 * 1000;

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

async function writeHistory(h: DbHandle, n: number): Promise<void> {
  const spec = JSON.stringify({ image: 'bench', command: ['bench', 'noop'] });
  const ended = sql`now() - interval '30 days' + i * interval '1 ms'`;
  await sql`INSERT INTO tasks (id, user_id, title, run_spec, board_column, created_at, updated_at)
    SELECT 'tsk_' || md5('t' || i), 'u' || (i % 100), 'done ' || i, ${spec}::jsonb, 'done', ${ended}, ${ended}
    FROM generate_series(1, ${n}::int) i`.execute(h.db);
  await sql`INSERT INTO sessions (id, task_id, user_id, kind, status, attempt, enqueued_at, claimed_at,
      backend, handle, owner_node, epoch, started_at, finished_at, exit_code, updated_at)
    SELECT 'ses_' || md5('s' || i), 'tsk_' || md5('t' || i), 'u' || (i % 100), 'run', 'succeeded', 1,
      ${ended}, ${ended}, 'simulated', 'h' || i, 'gone@boot', 1, ${ended}, ${ended}, 0, ${ended}
    FROM generate_series(1, ${n}::int) i`.execute(h.db);
  await sql`INSERT INTO session_events (session_id, from_status, to_status, reason, node, epoch, at)
    SELECT 'ses_' || md5('s' || i), st.f, st.t, 'bench', 'gone@boot', 1, ${ended}
    FROM generate_series(1, ${n}::int) i,
      (VALUES (NULL, 'queued'), ('queued', 'running'), ('running', 'succeeded')) st(f, t)`.execute(
    h.db,
  );
  await sql`INSERT INTO session_outputs (session_id, text, total_bytes, truncated, created_at)
    SELECT 'ses_' || md5('s' || i), repeat('step ' || i || ' of the build: ok' || E'\n', 20), 600, false, ${ended}
    FROM generate_series(1, ${n}::int) i`.execute(h.db);
  await sql`ANALYZE`.execute(h.db);
}

interface Boot {
  bootedMs: number;
  heapMB: number;
  cards: number;
  cardsMs: number;
}

/** A runtime on the store: time to `booted`, heap kept, one `cards(null)`. */
async function boot(url: string, retentionMs: number | null): Promise<Boot> {
  const h = await connect({ databaseUrl: url });
  const clock = realClock();
  const cluster = new SimulatedCluster({ clock, nodes: ['sim-1'], commands: {} });
  gc();
  const heap0 = process.memoryUsage().heapUsed;
  const t0 = performance.now();
  const runtime = await createRuntime({
    db: h.db,
    backend: new SimulatedBackend(cluster),
    clock,
    caps: { maxRunning: 20, defaultUserCap: 1 },
    nodeId: 'bench-history',
    retentionMs,
    // The boot pass must not prune what the next boot measures.
    reconcileMs: 3_600_000,
    onError: (e) => process.stderr.write(`history bench: ${String(e)}\n`),
  });
  await runtime.booted;
  const bootedMs = performance.now() - t0;
  gc();
  const heapMB = (process.memoryUsage().heapUsed - heap0) / 1e6;
  const t1 = performance.now();
  const cards = runtime.cards(null).length;
  const cardsMs = performance.now() - t1;
  await runtime.stop();
  await h.close();
  return { bootedMs, heapMB, cards, cardsMs };
}

export async function run(): Promise<void> {
  const loadStart = loadavg()[0] ?? 0;
  const { url, drop } = await scratchDatabase();
  const h = await connect({ databaseUrl: url, poolMax: 2 });
  const kept: Boot[] = [];
  const past: Boot[] = [];
  const batches: number[] = [];
  let pruned = 0;
  try {
    await migrate(h.db);
    await writeHistory(h, TASKS);
    process.stdout.write(`history: ${TASKS} finished tasks written\n`);
    for (let r = 0; r < RUNS; r++) {
      // Interleaved, so a slower minute weighs on both.
      kept.push(await boot(url, null));
      past.push(await boot(url, 7 * DAY));
      process.stdout.write(
        `  boot ${r + 1}: kept ${kept.at(-1)?.bootedMs.toFixed(0)} ms (${kept.at(-1)?.heapMB.toFixed(0)} MB), past retention ${past.at(-1)?.bootedMs.toFixed(0)} ms\n`,
      );
    }
    // The prune itself, batch after batch, each timed (the lock's hold, commit included).
    const before = new Date(Date.now() - 7 * DAY);
    for (;;) {
      const t0 = performance.now();
      const ids = await pruneFinished(h.db, { before, limit: PRUNE_BATCH });
      batches.push(performance.now() - t0);
      pruned += ids.length;
      if (ids.length < PRUNE_BATCH) break;
    }
  } finally {
    await h.close();
    await drop();
  }
  const loadEnd = loadavg()[0] ?? 0;
  const med = (xs: Boot[], f: (b: Boot) => number) => median(xs.map(f));
  const total = batches.reduce((a, b) => a + b, 0);
  const row = (label: string, xs: Boot[]) =>
    `| ${label} | ${xs[0]?.cards.toLocaleString('en')} | ${med(xs, (b) => b.bootedMs).toFixed(0)} | ${med(xs, (b) => b.heapMB).toFixed(1)} | ${med(xs, (b) => b.cardsMs).toFixed(1)} |`;
  const lines = [
    '# history: what finished work costs a node, and what retention costs the store',
    '',
    `${TASKS.toLocaleString('en')} finished tasks in the store (each with its attempt, three history`,
    'rows and a 20-line stored output), ended 30 days ago. A fresh runtime on the',
    `Postgres server, medians of ${RUNS} boots each, interleaved:`,
    '',
    '| retention | cards on the board | createRuntime → booted: ms | heap kept: MB | cards(null): ms |',
    '|---|---:|---:|---:|---:|',
    row('none (kept for ever, as before migration 21)', kept),
    row('7 days (the default), before the prune', past),
    '',
    `Per kept task: ${((med(kept, (b) => b.bootedMs) * 1000) / TASKS).toFixed(0)} µs of boot, ${((med(kept, (b) => b.heapMB) * 1e6) / TASKS).toFixed(0)} bytes of every node's heap.`,
    '',
    '## The prune',
    '',
    `${pruned.toLocaleString('en')} tasks in ${batches.length} batches of ${PRUNE_BATCH}: ${(total / 1000).toFixed(1)} s in all,`,
    `${((pruned / total) * 1000).toFixed(0)} tasks/s. Each batch holds the lock every tick waits for:`,
    `median ${median(batches).toFixed(1)} ms, p99 ${percentile(batches, 99).toFixed(1)} ms, max ${Math.max(...batches).toFixed(1)} ms.`,
    '',
    `Load average ${loadStart.toFixed(2)} at the start, ${loadEnd.toFixed(2)} at the end.`,
  ];
  writeResults(
    'history',
    { tasks: TASKS, kept, past, batches, pruned, loadStart, loadEnd },
    lines.join('\n'),
  );
}
