/**
 * What sharing running cards' output between nodes costs the database
 * (migration 27, src/db/liveTails.ts): one node's write of its tails, once a
 * period, and a watched node's read of them, for 20, 200 and 1,000 running
 * sessions, with typical lines (20 of 80 characters) and the worst a card
 * holds (20 of 500). The write is the statement's wall time seen from the
 * node and the WAL it wrote (`pg_current_wal_lsn` before and after, on a
 * database nobody else writes to: close enough on a quiet server); the
 * read is the steady read of a node that has every tail already (nothing
 * comes back) and the first read of a node that has none (all come back).
 *
 * Server URL: ROUNDTABLE_BENCH_DATABASE_URL, else ROUNDTABLE_TEST_DATABASE_URL,
 * else the local server; a scratch database, dropped after. Medians of 9
 * runs after 2 untimed ones.
 */
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { sql } from 'kysely';
import { connect, type DbHandle } from '../../src/db/connect.js';
import { type KnownTail, readLiveTails, writeLiveTails } from '../../src/db/liveTails.js';
import { migrate } from '../../src/db/migrations.js';
import { claim } from '../../src/db/sessionTransitions.js';
import { createTaskWithSession } from '../../src/db/tasks.js';
import { scratchDatabase } from '../serverAdmin.js';
import { median, writeResults } from '../stats.js';

const OWNER = 'bench-a@1';
const SIZES = [20, 200, 1_000];
const SHAPES = [
  { name: '20 lines of 80 chars', chars: 80 },
  { name: '20 lines of 500 chars', chars: 500 },
];
const RUNS = 9;
const WARMUP = 2;

interface Row {
  sessions: number;
  lines: string;
  writeMs: number;
  walKb: number;
  readSteadyMs: number;
  readAllMs: number;
}

/** `n` sessions running under OWNER at epoch 1. */
async function running(h: DbHandle, n: number): Promise<string[]> {
  const ids: string[] = [];
  const now = new Date();
  for (let i = 0; i < n; i++) {
    const { session } = await createTaskWithSession(h.db, {
      userId: `u${i}`,
      title: `t${i}`,
      spec: { image: 'i', command: ['c'] },
      now,
    });
    await claim(h.db, { sessionId: session.id, epoch: 0, owner: OWNER, now });
    ids.push(session.id);
  }
  return ids;
}

const walLsn = async (h: DbHandle): Promise<bigint> => {
  const r = await sql<{ lsn: string }>`SELECT pg_current_wal_lsn()::text AS lsn`.execute(h.db);
  const [hi, lo] = (r.rows[0]?.lsn ?? '0/0').split('/');
  return (BigInt(`0x${hi}`) << 32n) + BigInt(`0x${lo}`);
};

async function measure(h: DbHandle, ids: string[], chars: number): Promise<Omit<Row, 'lines'>> {
  const writes: number[] = [];
  const wal: number[] = [];
  const steady: number[] = [];
  const all: number[] = [];
  for (let run = 0; run < WARMUP + RUNS; run++) {
    // Every run's lines differ, as a chatty run's do period to period, and
    // do not compress away (random text: an upper bound on the WAL; TOAST compresses real logs).
    const tails = ids.map((sessionId, i) => ({
      sessionId,
      epoch: 1,
      lines: Array.from({ length: 20 }, (_, k) =>
        `${run}:${i}:${k} ${randomBytes(chars).toString('base64')}`.slice(0, chars),
      ),
    }));
    const lsn = await walLsn(h);
    const t0 = performance.now();
    for (let i = 0; i < tails.length; i += 500)
      await writeLiveTails(h.db, { owner: OWNER, tails: tails.slice(i, i + 500), ended: [] });
    const writeMs = performance.now() - t0;
    const walBytes = Number((await walLsn(h)) - lsn);
    const none: KnownTail[] = ids.map((sessionId) => ({ sessionId, epoch: 1, seq: 0 }));
    const t1 = performance.now();
    const got: { sessionId: string; seq: number }[] = [];
    for (let i = 0; i < none.length; i += 500)
      got.push(...(await readLiveTails(h.db, none.slice(i, i + 500))));
    const allMs = performance.now() - t1;
    const seqs = new Map(got.map((t) => [t.sessionId, t.seq]));
    const had = ids.map((sessionId) => ({ sessionId, epoch: 1, seq: seqs.get(sessionId) ?? 0 }));
    const t2 = performance.now();
    for (let i = 0; i < had.length; i += 500) await readLiveTails(h.db, had.slice(i, i + 500));
    const steadyMs = performance.now() - t2;
    if (run < WARMUP) continue;
    writes.push(writeMs);
    wal.push(walBytes / 1024);
    all.push(allMs);
    steady.push(steadyMs);
  }
  return {
    sessions: ids.length,
    writeMs: median(writes),
    walKb: median(wal),
    readSteadyMs: median(steady),
    readAllMs: median(all),
  };
}

export async function run(): Promise<void> {
  const load = loadavg()[0] ?? 0;
  const scratch = await scratchDatabase();
  const h = await connect({ databaseUrl: scratch.url });
  const rows: Row[] = [];
  try {
    await migrate(h.db);
    // Another boot's board is watched: without one a node writes no tail.
    await sql`INSERT INTO node_heartbeats (owner, node_id, started_at, beat_at, watching)
      VALUES ('bench-b@1', 'bench-b', now(), now(), true)`.execute(h.db);
    let ids: string[] = [];
    for (const n of SIZES) {
      ids = [...ids, ...(await running(h, n - ids.length))];
      for (const shape of SHAPES) {
        const r = await measure(h, ids, shape.chars);
        rows.push({ ...r, lines: shape.name });
        process.stdout.write(
          `liveTails: ${n} sessions, ${shape.name}: write ${r.writeMs.toFixed(1)} ms (${r.walKb.toFixed(0)} KB WAL), read ${r.readSteadyMs.toFixed(2)} / ${r.readAllMs.toFixed(1)} ms\n`,
        );
      }
    }
  } finally {
    await h.close();
    await scratch.drop();
  }
  const table = rows
    .map(
      (r) =>
        `| ${r.sessions.toLocaleString('en')} | ${r.lines} | ${r.writeMs.toFixed(1)} | ${r.walKb.toFixed(0)} | ${r.readSteadyMs.toFixed(2)} | ${r.readAllMs.toFixed(1)} |`,
    )
    .join('\n');
  writeResults(
    'liveTails',
    { load, rows },
    `# Live output between nodes: what a period costs the database (Postgres server)

Generated by \`npm run bench -- liveTails\` (bench/suites/liveTails.bench.ts); what each column times is in the file's header. Medians of ${RUNS} runs after ${WARMUP}; load average (1 min) ${load.toFixed(2)} at the start, on 2 shared cores.

| running sessions with new output | each tail | one node's write, ms | its WAL, KB | a watched node's read, nothing new, ms | its read, every tail new, ms |
|---:|---|---:|---:|---:|---:|
${table}

Each node writes once per \`liveOutputMs\` (1 s by default) when any of its runs printed, and each watched node reads once per period; a run with nothing new since the last write is not in the write.`,
  );
}
