/** Renders the peers bench results as markdown + SVG and writes them under bench/results/. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { barsSection } from './issueBars.js';
import type { MachineInfo } from './machine.js';
import type { PgbenchResult } from './pgbench.js';
import { SCRIPT_TEXT } from './pgbench.js';
import type { QueryProfile } from './queryProfile.js';
import type { LatencyResult } from './scenarios/latency.js';
import type { RecoveryResult } from './scenarios/recovery.js';
import type { ThroughputRun } from './scenarios/throughput.js';
import { type Bar, barChart } from './svgChart.js';
import type { RecoveryDoc, ScenarioName } from './types.js';

export interface SystemResult {
  name: string;
  /** What the report calls it; absent in reports written before labels existed. */
  label?: string;
  /** Scenarios this system does not take part in. */
  skipped?: ScenarioName[];
  version?: string;
  node?: string;
  settings?: Readonly<Record<string, string>>;
  recoveryDoc?: RecoveryDoc;
  unavailable?: string;
  throughput?: {
    jobs: number;
    runs: ThroughputRun[];
    medianJobsPerSecond: number;
    medianCommitsPerJob: number;
    medianTuplesPerJob: number;
  };
  latency?: LatencyResult;
  recovery?: RecoveryResult;
  recoveryUnavailable?: string;
  errors: string[];
}

export interface PeersReport {
  date: string;
  durationS: number;
  machine: MachineInfo;
  load: { start: number; end: number };
  ceiling: PgbenchResult[];
  latency: { rate: number; seconds: number };
  recoveryJobs: number;
  results: SystemResult[];
}

const f0 = (n: number): string => Math.round(n).toLocaleString('en-US');
const f1 = (n: number): string => n.toFixed(1);
const f2 = (n: number): string => n.toFixed(2);

function label(r: SystemResult): string {
  if (r.label !== undefined) return r.label;
  // Reports written before the runtime landed measured the src/db path
  // under the bench's stand-in dispatcher under these names.
  if (r.name === 'roundtable') return 'roundtable (src/db path)';
  if (r.name === 'roundtable-caps100') return 'roundtable (src/db path), caps on, 100 users';
  return r.name;
}

const skips = (r: SystemResult, s: ScenarioName): boolean => r.skipped?.includes(s) ?? false;

const range = (xs: readonly number[], fmt: (n: number) => string): string =>
  xs.length === 0 ? '' : `${fmt(Math.min(...xs))}–${fmt(Math.max(...xs))}`;

function med(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const rank = Math.min(s.length - 1, Math.max(0, Math.ceil(0.5 * s.length) - 1));
  return s[rank] ?? Number.NaN;
}

const byName = (p: PeersReport, name: string): SystemResult | undefined =>
  p.results.find((r) => r.name === name && r.throughput !== undefined);

/** The issue's ratios: median of medians, and the range of run-by-run ratios (run i against run i). */
function ratioSection(p: PeersReport): string[] {
  const pairs: [string, string, string][] = [
    [
      'roundtable-caps100',
      'graphile-worker',
      'caps on (100 users, cap 1, global 20) vs tuned graphile-worker',
    ],
    ['roundtable', 'graphile-worker', 'single user vs tuned graphile-worker'],
    ['roundtable-3nodes', 'roundtable-caps100', '3 node processes vs 1 node (caps on, 100 users)'],
    [
      'roundtable-caps100',
      'roundtable-tick',
      'runtime vs its own tick() alone (caps on, 100 users)',
    ],
    ['roundtable-tick', 'graphile-worker', 'tick() alone vs tuned graphile-worker'],
    [
      'roundtable-floor',
      'graphile-worker',
      'the row writes alone (no tick, no node) vs tuned graphile-worker',
    ],
    ['roundtable-tick', 'roundtable-floor', 'tick() alone vs the row writes alone'],
  ];
  const L: string[] = [];
  for (const [a, b, what] of pairs) {
    const ra = byName(p, a)?.throughput;
    const rb = byName(p, b)?.throughput;
    if (ra === undefined || rb === undefined) continue;
    const n = Math.min(ra.runs.length, rb.runs.length);
    const per = Array.from(
      { length: n },
      (_, i) => (ra.runs[i]?.jobsPerSecond ?? 0) / (rb.runs[i]?.jobsPerSecond ?? 1),
    );
    L.push(
      `| ${what} | ${f0(ra.medianJobsPerSecond)} / ${f0(rb.medianJobsPerSecond)} | **${f2(ra.medianJobsPerSecond / rb.medianJobsPerSecond)}** | ${range(per, f2)} |`,
    );
  }
  if (L.length === 0) return [];
  return [
    '',
    '## Ratios',
    '',
    'Medians of the same `bench:peers` run; the range is of the ratios of run i of one row to run i of the other (throughput runs in rounds, so the runs i of two rows are seconds apart on this shared machine).',
    '',
    '| ratio | jobs/s (medians) | ratio of medians | range of run-by-run ratios |',
    '|---|---:|---:|---:|',
    ...L,
  ];
}

/** Node CPU and database time per job, from the throughput runs. */
function timeSection(p: PeersReport): string[] {
  const rows = p.results.filter((r) =>
    r.throughput?.runs.some((x) => x.nodeCpuUsPerJob !== undefined),
  );
  if (rows.length === 0) return [];
  const L: string[] = [
    '',
    "## Where each job's time goes",
    '',
    "Per job, medians over the throughput runs (range in brackets). **node CPU**: `process.cpuUsage()` (user + system) of the worker's node process(es) from the first enqueue to done, asked over IPC at both ends (for the 3-node row, the sum of the three processes; roundtable's runtime rows submit in the worker, so the enqueue's node side is in it; the other rows enqueue from the bench process, whose CPU is not counted). **DB active**: `pg_stat_database.active_time` over the run, the time the database's backends spent executing statements (wall time in the backend, so it includes lock waits and CPU starvation on this shared 2-core box; flushed when the backends exit). **rt_tick**: `pg_stat_user_functions.total_time` of `rt_tick` over the run (`track_functions = 'pl'` set with ALTER DATABASE on the scratch database). **wall** is 1e6 / jobs/s. DB active and rt_tick can exceed it: work of several backends overlaps (the database runs a node's next tick while the node handles the last reply, the monitoring backends run meanwhile, and in the 3-node row three nodes tick), and a backend waiting on the tick's advisory lock or for a CPU counts as active. In the 3-node row, most of DB active is two backends that use no CPU: each follower waits for the Reconciler's leader lock with a blocking `pg_advisory_lock` (src/db/leaderLock.ts), which the server counts as active for the whole run, ~2x wall per job.",
    '',
    '| system | wall µs/job (1e6 / jobs/s) | node CPU µs/job | DB active µs/job | rt_tick µs/job | rt_tick calls/job |',
    '|---|---:|---:|---:|---:|---:|',
  ];
  for (const r of rows) {
    const runs = r.throughput?.runs ?? [];
    const wall = runs.map((x) => 1e6 / x.jobsPerSecond);
    const cpu = runs.map((x) => x.nodeCpuUsPerJob ?? Number.NaN);
    const db = runs.map((x) => x.dbActiveUsPerJob ?? Number.NaN);
    const tick = runs.map((x) => x.functions?.find((f) => f.name === 'rt_tick')?.usPerJob ?? 0);
    const calls = runs.map(
      (x) => (x.functions?.find((f) => f.name === 'rt_tick')?.calls ?? 0) / x.jobs,
    );
    const cell = (xs: number[], fmt: (n: number) => string) =>
      `${fmt(med(xs))} (${range(xs, fmt)})`;
    const hasTick = tick.some((t) => t > 0);
    L.push(
      `| ${label(r)} | ${cell(wall, f0)} | ${cell(cpu, f0)} | ${cell(db, f0)} | ${hasTick ? cell(tick, f0) : ''} | ${hasTick ? cell(calls, (n) => n.toFixed(3)) : ''} |`,
    );
  }
  return L;
}

/** Per-job statement counts of a system's first throughput run, most frequent first. */
function profileOf(r: SystemResult): { profile: QueryProfile; jobs: number } | undefined {
  const run = r.throughput?.runs[0];
  return run?.profile === undefined ? undefined : { profile: run.profile, jobs: run.jobs };
}

function profileSection(p: PeersReport): string[] {
  const rows = p.results.flatMap((r) => {
    const got = profileOf(r);
    return got === undefined ? [] : [{ r, ...got }];
  });
  if (rows.length === 0) return [];
  const L: string[] = [];
  L.push('');
  L.push('## Where the writes go');
  L.push('');
  L.push(
    "Every statement the worker process sent through `pg` in the first throughput run (counted by wrapping `pg.Client.prototype.query` in the worker, and in each node process of the 3-node row, summed; the server has no pg_stat_statements preloaded), divided by the jobs. It includes the worker's start-up and its background loops over the run (roundtable: the tick feed's poll of `dispatch_state`, heartbeats, the Reconciler's boot pass), and the enqueues of roundtable's runtime rows (submitted in the worker, riding its ticks), not the enqueues of systems that enqueue from the bench process (pg-boss, graphile-worker: one bulk statement per 1,000 jobs; roundtable tick() row: one tick per 500 jobs). `select rt_tick` is one call of the tick function: one statement and one commit that writes. A write transaction is a BEGIN..COMMIT with at least one INSERT/UPDATE/DELETE, or one such statement on its own: each is a commit the server must flush to disk, which is what bounds a queue on this server (see the pgbench ceiling).",
  );
  L.push('');
  L.push('| system | statements/job | write transactions/job | read-only transactions/job |');
  L.push('|---|---:|---:|---:|');
  for (const { r, profile, jobs } of rows) {
    const total = Object.values(profile.statements).reduce((a, b) => a + b, 0);
    L.push(
      `| ${label(r)} | ${f2(total / jobs)} | ${f2(profile.writeTransactions / jobs)} | ${f2(profile.readTransactions / jobs)} |`,
    );
  }
  for (const { r, profile, jobs } of rows) {
    L.push('');
    L.push(`### ${label(r)}: statements per job`);
    L.push('');
    const top = Object.entries(profile.statements)
      .sort((a, b) => b[1] - a[1])
      .filter(([, n]) => n / jobs >= 0.01);
    L.push(top.map(([k, n]) => `\`${k}\` ${f2(n / jobs)}`).join(', '));
    if (!r.name.startsWith('roundtable')) continue;
    L.push('');
    L.push('| per job | statement |');
    L.push('|---:|---|');
    const shapes = Object.entries(profile.shapes ?? {})
      .sort((a, b) => b[1] - a[1])
      .filter(([, n]) => n / jobs >= 0.05);
    for (const [text, n] of shapes)
      L.push(`| ${f2(n / jobs)} | \`${text.replaceAll('|', '\\|')}\` |`);
  }
  return L;
}

export function chartOf(report: PeersReport): string {
  const bars: Bar[] = report.results
    .filter((r) => !skips(r, 'throughput'))
    .map((r) =>
      r.throughput !== undefined
        ? { label: label(r), value: r.throughput.medianJobsPerSecond }
        : { label: label(r), value: 0, note: r.unavailable ?? 'failed, see report' },
    );
  const top = report.ceiling.reduce((a, c) => (c.insertsPerSecond > a.insertsPerSecond ? c : a));
  bars.push({ label: `pgbench INSERT, ${top.clients} clients`, value: top.insertsPerSecond });
  return barChart(
    'No-op jobs per second, end to end, global limit 20 (median); pgbench insert ceiling',
    '/s',
    bars,
  );
}

export function renderReport(p: PeersReport): string {
  const m = p.machine;
  const L: string[] = [];
  L.push('# roundtable next to pg-boss and graphile-worker');
  L.push('');
  L.push('Generated by `npm run bench:peers` (bench/peers/run.ts); do not edit by hand.');
  L.push('');
  L.push('![jobs per second](peers.svg)');
  L.push('');
  L.push('## Results');
  L.push('');
  L.push(
    '| system | Node | jobs/s (median) | jobs/s range | jobs x runs | commits/job | tuples written/job | latency median | latency p99 | recovery after SIGKILL |',
  );
  L.push('|---|---|---:|---:|---:|---:|---:|---:|---:|---|');
  for (const r of p.results) {
    if (r.unavailable !== undefined) {
      L.push(`| ${label(r)} | | ${r.unavailable} | | | | | | | |`);
      continue;
    }
    const t = r.throughput;
    const na = 'n/a';
    const rec =
      r.recovery !== undefined
        ? `${f2(r.recovery.recoveredMs / 1000)} s (${r.recovery.restarted} re-run, ${r.recovery.failed} failed)`
        : (r.recoveryUnavailable ??
          (skips(r, 'recovery') ? 'not measured for this row' : 'failed, see below'));
    const tpFail = skips(r, 'throughput') ? na : 'failed';
    const latFail = skips(r, 'latency') ? na : 'failed';
    L.push(
      [
        '',
        label(r),
        r.node ?? (r.unavailable === undefined ? p.machine.node : ''),
        t ? f0(t.medianJobsPerSecond) : tpFail,
        t
          ? range(
              t.runs.map((x) => x.jobsPerSecond),
              f0,
            )
          : '',
        t ? `${f0(t.jobs)} x ${t.runs.length}` : '',
        t ? f2(t.medianCommitsPerJob) : '',
        t ? f2(t.medianTuplesPerJob) : '',
        r.latency ? `${f1(r.latency.medianMs)} ms` : latFail,
        r.latency ? `${f1(r.latency.p99Ms)} ms` : '',
        rec,
        '',
      ]
        .join(' | ')
        .trim(),
    );
  }
  for (const c of p.ceiling) {
    L.push(
      `| pgbench single-row INSERT, ${c.clients} client(s) | | ${f0(c.insertsPerSecond)} inserts/s | | ${c.seconds} s | 1 | 1 | | | |`,
    );
  }
  L.push('');
  L.push(
    '- **jobs/s**: N no-op jobs enqueued (in bulk where the system has a bulk insert) into an idle worker process limited to 20 running jobs, timed from the first enqueue until the store reports none left; median of the runs. Each run uses a fresh database.',
  );
  L.push(
    "- **commits/job, tuples written/job**: medians over the runs of the deltas of `pg_stat_database.xact_commit` and `tup_inserted + tup_updated + tup_deleted` over a throughput run (enqueue, dispatch, completion and whatever the system does in the background meanwhile), divided by N; the bench's own progress polls are subtracted from the commits. The ceiling for a system on this server is roughly the pgbench rate divided by its commits per job, while a system that batches (fewer than one commit per job) is bounded by other costs.",
  );
  L.push(
    `- **latency**: ${p.latency.rate} jobs/s for ${p.latency.seconds} s, each enqueued alone; time from just before the enqueue call to the first line of the handler, same worker settings as the throughput test.`,
  );
  L.push(
    `- **recovery**: a worker process holding ${f0(p.recoveryJobs)} running jobs is SIGKILLed while a standby worker process (started after the jobs were taken) is up, or, for the row that says so, a new worker process of the same node is started right after the kill (its start-up is in the time); time from the kill until every job has started again in the standby or is marked failed for good.`,
  );
  L.push(...barsSection(p));
  L.push('');
  L.push('## Settings and recovery, per system');
  for (const r of p.results) {
    L.push('');
    L.push(`### ${label(r)}`);
    if (r.unavailable !== undefined) {
      L.push('');
      L.push(r.unavailable);
      continue;
    }
    L.push('');
    L.push(`- version: ${r.version}; worker process on Node ${r.node ?? p.machine.node}`);
    for (const [k, v] of Object.entries(r.settings ?? {})) L.push(`- ${k}: ${v}`);
    if (r.recoveryDoc) {
      L.push(`- recovery, documented default: ${r.recoveryDoc.defaultBehaviour}`);
      L.push(`- recovery, as measured: ${r.recoveryDoc.measuredWith}`);
    }
    if (r.throughput) {
      L.push(
        `- throughput runs (jobs/s): ${r.throughput.runs.map((x) => f0(x.jobsPerSecond)).join(', ')}`,
      );
    }
    if (r.recovery?.timeline) {
      L.push(
        `- recovery timeline (from the rows, s after the kill): ${Object.entries(
          r.recovery.timeline,
        )
          .map(([k, v]) => `${k} ${Number.isNaN(v) ? 'none' : f2(v / 1000)}`)
          .join('; ')}`,
      );
    }
    if (r.latency) L.push(`- latency max: ${f1(r.latency.maxMs)} ms over ${r.latency.jobs} jobs`);
    for (const e of r.errors) L.push(`- **error**: ${e}`);
  }
  L.push(...ratioSection(p));
  L.push(...timeSection(p));
  L.push(...profileSection(p));
  L.push('');
  L.push('## Machine');
  L.push('');
  L.push(
    `- ${m.nproc} CPUs (${m.cpuModel}), ${m.memoryGiB} GiB memory; bench process on Node ${m.node}`,
  );
  L.push(`- ${m.postgres.version}`);
  L.push(
    `- Postgres settings: ${['shared_buffers', 'synchronous_commit', 'fsync', 'wal_level', 'max_connections', 'work_mem'].map((k) => `${k}=${m.postgres[k]}`).join(', ')}`,
  );
  L.push(
    `- load average (1 min) at start ${f2(p.load.start)}, at end ${f2(p.load.end)}: this machine is shared with other work, so compare rows of one run rather than runs of different days`,
  );
  L.push(
    `- pgbench: \`${p.ceiling[0]?.command ?? ''}\` with insert.sql = \`${SCRIPT_TEXT.trim()}\` into \`ceiling (id bigserial primary key, payload jsonb, created_at timestamptz default now())\``,
  );
  L.push(`- run at ${p.date}, took ${p.durationS} s`);
  L.push('');
  L.push(
    'Rerun: `npm run bench:peers` (a Postgres server at PEERS_PG_URL, default postgres://postgres@127.0.0.1:5432, trust auth, allowed to create databases; pgbench on PATH or in /usr/lib/postgresql/15/bin). PEERS_JOBS, PEERS_RUNS, PEERS_RT_JOBS, PEERS_RT_RUNS, PEERS_ONLY (pg-boss, graphile-worker, roundtable, roundtable-caps100, roundtable-3nodes, roundtable-restart, roundtable-tick, roundtable-floor) and PEERS_SKIP (throughput, latency, recovery) change the sizes, the systems and the scenarios.',
  );
  return `${L.join('\n')}\n`;
}

/** Writes peers.md, peers.json and peers.svg; returns their paths. */
export function writeReport(report: PeersReport, markdown: string): string[] {
  const dir = new URL('../results/', import.meta.url);
  mkdirSync(dir, { recursive: true });
  const files: [string, string][] = [
    ['peers.md', markdown],
    ['peers.json', `${JSON.stringify(report, null, 2)}\n`],
    ['peers.svg', chartOf(report)],
  ];
  for (const [name, text] of files) writeFileSync(new URL(name, dir), text);
  return files.map(([name]) => `bench/results/${name}`);
}
