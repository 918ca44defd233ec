/**
 * The runtime's hot path, grant -> start -> finish, as node CPU per job:
 * `process.cpuUsage()` of a node process (bench/hotpath/hotpathWorker.ts)
 * over windows of no-op jobs on the simulated backend, 100 users (per-user
 * cap 1, global cap 20), with jobs/s beside it. Cases:
 *
 * - PGlite (in the node's process: its own CPU is measured apart and the
 *   node's is the rest), 100 queued behind;
 * - the Postgres server, 100 queued behind;
 * - the Postgres server, 100,000 queued behind (one more user whose cap is
 *   0): the issue's "node-side cost flat in queue depth";
 * - the two charts alone (bench/hotpath/chartsWorker.ts: the TaskRunner and
 *   its ContainerRun child with every I/O answered at once, no database, no
 *   backend): the floor a job's actors put under the node's CPU.
 *
 * Beside the CPU, what bounds each window (the worker's header): the share
 * of its wall time the node's event loop was busy, and on the server the
 * share with a tick out. Both well under 1 with a sum near 1: the node and
 * the database take turns, neither is saturated.
 *
 * With `HOTPATH_BASELINE=<git ref>` the same driver also runs the runtime of
 * that commit (a detached worktree under the system's temp directory that
 * shares this checkout's node_modules), interleaved run by run with this
 * checkout's, so both sides see the same machine load.
 *
 * Knobs: HOTPATH_RUNS (3 processes per case and side), HOTPATH_WINDOWS (2
 * windows per process), HOTPATH_JOBS (1000 per server window),
 * HOTPATH_PGLITE_JOBS (300), HOTPATH_DEEP (100000), HOTPATH_CHARTS_JOBS
 * (5000), HOTPATH_CASES (comma-separated subset of pglite,server,deep,charts),
 * PEERS_DB_TAG (appended to
 * the scratch database's name, as in bench/peers).
 */
import { spawn } from 'node:child_process';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import type { HotpathWindow } from '../hotpath/hotpathWindow.js';
import { createScratch, dropScratch } from '../peers/scratchDb.js';
import { baselineSide, currentSide, ROOT, type Side } from '../sides.js';
import { median, positiveIntEnv, writeResults } from '../stats.js';

const env = positiveIntEnv;
const RUNS = env('HOTPATH_RUNS', 3);
const WINDOWS = env('HOTPATH_WINDOWS', 2);
const JOBS = env('HOTPATH_JOBS', 1000);
const PGLITE_JOBS = env('HOTPATH_PGLITE_JOBS', 300);
const DEEP = env('HOTPATH_DEEP', 100_000);
const CHARTS_JOBS = env('HOTPATH_CHARTS_JOBS', 5000);
const TAG = process.env.PEERS_DB_TAG;
const WORKER = join(ROOT, 'bench/hotpath/hotpathWorker.ts');
const CHARTS_WORKER = join(ROOT, 'bench/hotpath/chartsWorker.ts');

const log = (s: string): void => {
  process.stdout.write(`${s}\n`);
};

interface Case {
  name: 'pglite' | 'server' | 'deep' | 'charts';
  label: string;
  /** `none`: the charts alone, no database. */
  engine: 'pglite' | 'server' | 'none';
  jobs: number;
  backlog: number;
}
type Window = HotpathWindow;

function runWorker(side: Side, c: Case, url: string | undefined): Promise<Window[]> {
  const common = ['--root', side.root, '--jobs', String(c.jobs), '--windows', String(WINDOWS)];
  const args =
    c.engine === 'none'
      ? ['--import', 'tsx', CHARTS_WORKER, ...common]
      : [
          '--import',
          'tsx',
          WORKER,
          ...common,
          '--engine',
          c.engine,
          '--backlog',
          String(c.backlog),
          ...(url === undefined ? [] : ['--url', url]),
        ];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code !== 0) return reject(new Error(`hotpath worker exited ${code}`));
      try {
        const last = out.trim().split('\n').at(-1) ?? '';
        resolve((JSON.parse(last) as { windows: Window[] }).windows);
      } catch (error) {
        reject(error);
      }
    });
  });
}

const ALL_CASES: Case[] = [
  { name: 'pglite', label: 'PGlite, 100 queued', engine: 'pglite', jobs: 0, backlog: 100 },
  { name: 'server', label: 'server, 100 queued', engine: 'server', jobs: 0, backlog: 100 },
  { name: 'deep', label: 'server, deep backlog', engine: 'server', jobs: 0, backlog: 0 },
  { name: 'charts', label: 'the two charts alone (no I/O)', engine: 'none', jobs: 0, backlog: 0 },
];

export async function run(): Promise<void> {
  const wanted = (process.env.HOTPATH_CASES ?? 'pglite,server,deep,charts').split(',');
  const jobsOf = { pglite: PGLITE_JOBS, server: JOBS, none: CHARTS_JOBS };
  const cases = ALL_CASES.filter((c) => wanted.includes(c.name)).map((c) => ({
    ...c,
    jobs: jobsOf[c.engine],
    backlog: c.name === 'deep' ? DEEP : c.backlog,
    label: c.name === 'deep' ? `server, ${DEEP.toLocaleString('en-US')} queued` : c.label,
  }));
  const current = currentSide();
  const base = process.env.HOTPATH_BASELINE;
  const sides = base ? [baselineSide(base, 'hotpath'), current] : [current];
  const load = { start: loadavg()[0] ?? 0, end: 0 };
  const results = new Map<string, Window[]>();
  const key = (s: Side, c: Case) => `${s.name}|${c.name}`;
  for (const c of cases) {
    for (let r = 0; r < RUNS; r++) {
      for (const side of sides) {
        // PEERS_DB_TAG (as scratchName's): two helpers' runs never drop each other's database.
        const db = `bench_hotpath_${c.name}${TAG ? `_${TAG}` : ''}`;
        const url = c.engine === 'server' ? await createScratch(db) : undefined;
        try {
          // A failed process is reported and the rest still run and are written.
          const ws = await runWorker(side, c, url).catch((error: unknown) => {
            log(`  ${c.label}, ${side.name}, run ${r + 1}: FAILED (${String(error)})`);
            return [];
          });
          results.set(key(side, c), [...(results.get(key(side, c)) ?? []), ...ws]);
          for (const w of ws)
            log(
              `  ${c.label}, ${side.name}, run ${r + 1}: ${((w.jobs / w.wallMs) * 1000).toFixed(0)} jobs/s, node CPU ${((w.cpuUs - w.pgliteUs) / w.jobs).toFixed(0)} µs/job${w.pgliteUs > 0 ? ` (+ PGlite ${(w.pgliteUs / w.jobs).toFixed(0)})` : ''}${w.loopBusy === undefined ? '' : `, loop busy ${w.loopBusy.toFixed(2)}`}${typeof w.tickOut === 'number' ? `, a tick out ${w.tickOut.toFixed(2)}` : ''}, load ${(loadavg()[0] ?? 0).toFixed(1)}`,
            );
        } finally {
          if (url !== undefined) await dropScratch(db);
        }
      }
    }
  }
  load.end = loadavg()[0] ?? 0;

  const L: string[] = [];
  L.push('# Runtime hot path: node CPU per job (grant -> start -> finish)');
  L.push('');
  L.push(
    "Generated by `npm run bench -- hotpath` (bench/suites/hotpath.bench.ts; what is measured is in the file's header).",
  );
  L.push(
    `Load average (1 min) ${load.start.toFixed(2)} at the start, ${load.end.toFixed(2)} at the end, on 2 cores shared with other work: jobs/s is inflated by the load, CPU µs/job much less so.`,
  );
  L.push(
    `${RUNS} node processes per case and side, ${WINDOWS} windows each (after a warm-up window); medians over the windows, range in brackets. No-op jobs on the simulated backend, 100 users, per-user cap 1, global cap 20.`,
  );
  L.push('');
  L.push(
    '| case | runtime | jobs/window | jobs/s | node CPU µs/job | PGlite CPU µs/job | loop busy | a tick out |',
  );
  L.push('|---|---|---:|---:|---:|---:|---:|---:|');
  const f0 = (n: number) => n.toFixed(0);
  const rng = (xs: number[]) => `${f0(Math.min(...xs))}–${f0(Math.max(...xs))}`;
  /** A share's median and range, or – when no window measured it. */
  const share = (xs: number[]) =>
    xs.length === 0
      ? '–'
      : `${median(xs).toFixed(2)} (${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)})`;
  for (const c of cases)
    for (const side of sides) {
      const ws = results.get(key(side, c)) ?? [];
      if (ws.length === 0) continue;
      const jps = ws.map((w) => (w.jobs / w.wallMs) * 1000);
      const node = ws.map((w) => (w.cpuUs - w.pgliteUs) / w.jobs);
      const pgl = ws.map((w) => w.pgliteUs / w.jobs);
      const busy = ws.flatMap((w) => (w.loopBusy === undefined ? [] : [w.loopBusy]));
      const out = ws.flatMap((w) => (typeof w.tickOut === 'number' ? [w.tickOut] : []));
      L.push(
        `| ${c.label} | ${side.name} | ${c.jobs} | ${f0(median(jps))} (${rng(jps)}) | **${f0(median(node))}** (${rng(node)}) | ${c.engine === 'pglite' ? `${f0(median(pgl))} (${rng(pgl)})` : '–'} | ${share(busy)} | ${share(out)} |`,
      );
    }
  L.push('');
  L.push(
    "Node CPU is the node process's user + system CPU over the window (the runtime, the driver's submits and its 5 ms progress check), minus, on PGlite, the CPU inside PGlite's synchronous protocol call (the database runs on the node's thread there). The charts row is one process running only the TaskRunner chart and its ContainerRun child, 20 at a time, every I/O action answered on the next microtask (bench/hotpath/chartsWorker.ts): the floor the runtime's per-job actors set, whatever the database and the backend cost.",
  );
  L.push('');
  L.push(
    "Loop busy is the share of the window's wall time the node's event loop ran callbacks (`performance.eventLoopUtilization()`), not waiting for I/O or a timer; a tick out is the share with at least one `rt_tick` statement handed to node-postgres and not yet answered (server cases only: on PGlite the statement runs on the node's thread). Both well under 1 with a sum near 1 means the node and the database take turns: the node handles a reply (starts the granted runs, which finish and queue their ops) while no tick is out, then the tick carrying those ops is out while the node waits, so the rate is bounded by the sum of the two, not by either side's capacity.",
  );
  writeResults(
    'hotpath',
    {
      load,
      sides,
      cases,
      results: Object.fromEntries(results),
    },
    L.join('\n'),
  );
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
