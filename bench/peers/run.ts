/**
 * `npm run bench:peers`: roundtable next to pg-boss and graphile-worker on
 * the same Postgres server, in one run; writes bench/results/peers.{md,json,svg}.
 *
 * Knobs (environment): PEERS_PG_URL (server, default postgres://postgres@127.0.0.1:5432),
 * PEERS_JOBS (5000) and PEERS_RUNS (7) for the peers' throughput, PEERS_RT_JOBS
 * (PEERS_JOBS: every system runs the same jobs, each in a fresh worker
 * process, so none is measured colder than another) and PEERS_RT_RUNS (7)
 * for roundtable's (throughput runs in rounds: run i of
 * every system, then run i + 1), PEERS_ONLY (comma-separated names:
 * pg-boss, graphile-worker, roundtable, roundtable-caps100, roundtable-restart,
 * roundtable-3nodes, roundtable-tick, roundtable-floor), PEERS_SKIP (comma-separated scenarios not to run:
 * throughput, latency, recovery), PEERS_LATENCY_S (30: seconds of the latency
 * scenario at 20 jobs/s, 600 samples, so its p99 is not the 2nd-slowest of 200), PEERS_PROF (a directory: each worker process,
 * and a multi-node worker's other nodes, writes a V8 CPU profile there; the
 * numbers of a profiled run are not comparable).
 * `tsx bench/peers/run.ts --render` re-renders the report from peers.json.
 */
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { median, positiveIntEnv } from '../stats.js';
import { machineInfo } from './machine.js';
import { pgbenchCeiling } from './pgbench.js';
import { type PeersReport, renderReport, type SystemResult, writeReport } from './report.js';
import { latencyRun } from './scenarios/latency.js';
import { recoveryRun } from './scenarios/recovery.js';
import { type ThroughputRun, throughputRun } from './scenarios/throughput.js';
import { SYSTEMS } from './systems/index.js';
import type { BenchSystem, ScenarioName } from './types.js';

// `--render`: rewrite peers.md and peers.svg from peers.json without measuring.
if (process.argv.includes('--render')) {
  const json = readFileSync(new URL('../results/peers.json', import.meta.url), 'utf8');
  const saved = JSON.parse(json) as PeersReport;
  process.stdout.write(`wrote ${writeReport(saved, renderReport(saved)).join(', ')}\n`);
  process.exit(0);
}

const num = positiveIntEnv;
const PEER_JOBS = num('PEERS_JOBS', 5000);
const PEER_RUNS = num('PEERS_RUNS', 7);
const RT_JOBS = num('PEERS_RT_JOBS', PEER_JOBS);
const RT_RUNS = num('PEERS_RT_RUNS', 7);
const ONLY = process.env.PEERS_ONLY?.split(',').filter((s) => s !== '');
const SKIP = process.env.PEERS_SKIP?.split(',').filter((s) => s !== '') ?? [];
const LATENCY = { rate: 20, seconds: num('PEERS_LATENCY_S', 30) };
// roundtable's recovery with its documented defaults takes up to
// heartbeat window (60 s) + one Reconciler period (60 s) + the re-queue work.
const RECOVERY_JOBS = 1000;
const RECOVERY_DEADLINE_MS = 240_000;

const log = (s: string): void => {
  process.stdout.write(`${s}\n`);
};
const describe = (e: unknown): string =>
  e instanceof Error ? `${e.name}: ${e.message}` : String(e);

const started = Date.now();
const load = { start: loadavg()[0] ?? 0, end: 0 };
const machine = await machineInfo();
log(`machine: ${machine.nproc} cpus, ${machine.memoryGiB} GiB, ${machine.postgres.version}`);

log('pgbench ceiling');
const ceiling = await pgbenchCeiling([1, 20], 10);
for (const c of ceiling) log(`  ${c.clients} clients: ${c.insertsPerSecond.toFixed(0)} inserts/s`);

const results: SystemResult[] = [];
const measured: {
  system: BenchSystem;
  r: SystemResult;
  takesPart: (s: ScenarioName) => boolean;
}[] = [];
for (const system of SYSTEMS) {
  if (ONLY !== undefined && !ONLY.includes(system.name)) continue;
  if ('unavailable' in system) {
    results.push({ name: system.name, unavailable: system.unavailable, errors: [] });
    continue;
  }
  const takesPart = (s: ScenarioName): boolean =>
    !SKIP.includes(s) && (system.scenarios?.includes(s) ?? true);
  const r: SystemResult = {
    name: system.name,
    ...(system.label !== undefined ? { label: system.label } : {}),
    ...(system.scenarios !== undefined || SKIP.length > 0
      ? {
          skipped: (['throughput', 'latency', 'recovery'] as const).filter((s) => !takesPart(s)),
        }
      : {}),
    version: system.version,
    settings: system.settings,
    recoveryDoc: system.recovery,
    errors: [],
  };
  results.push(r);
  measured.push({ system, r, takesPart });
}

// Throughput in rounds: round i runs every system's run i, one after the
// other, so the rows' runs i are seconds apart and their ratio compares
// like with like on a machine whose load drifts.
const isRt = (s: BenchSystem): boolean => s.name.startsWith('roundtable');
const runsOf = (s: BenchSystem): number => (isRt(s) ? RT_RUNS : PEER_RUNS);
const tp = new Map<string, ThroughputRun[]>();
const rounds = Math.max(0, ...measured.map((m) => runsOf(m.system)));
for (let i = 0; i < rounds; i++) {
  log(`throughput round ${i + 1} of ${rounds}`);
  for (const { system, r, takesPart } of measured) {
    if (!takesPart('throughput') || i >= runsOf(system) || r.errors.length > 0) continue;
    const jobs = isRt(system) ? RT_JOBS : PEER_JOBS;
    try {
      const one = await throughputRun(system, i, jobs);
      log(
        `  ${system.name}: ${one.jobsPerSecond.toFixed(0)} jobs/s (middle half ${one.steadyJobsPerSecond.toFixed(0)}), ${one.commitsPerJob.toFixed(3)} commits/job, ${one.tuplesPerJob.toFixed(2)} tuples/job, node CPU ${one.nodeCpuUsPerJob?.toFixed(0)} µs/job`,
      );
      tp.set(system.name, [...(tp.get(system.name) ?? []), one]);
    } catch (e) {
      r.errors.push(`throughput: ${describe(e)}`);
    }
  }
}
for (const { system, r } of measured) {
  const runs = tp.get(system.name);
  if (runs === undefined || runs.length === 0) continue;
  r.node = runs[0]?.node;
  r.throughput = {
    jobs: runs[0]?.jobs ?? 0,
    runs,
    medianJobsPerSecond: median(runs.map((t) => t.jobsPerSecond)),
    medianCommitsPerJob: median(runs.map((t) => t.commitsPerJob)),
    medianTuplesPerJob: median(runs.map((t) => t.tuplesPerJob)),
  };
}

for (const { system, r, takesPart } of measured) {
  if (takesPart('latency'))
    try {
      log(`${system.name}: latency, ${LATENCY.rate} jobs/s for ${LATENCY.seconds} s`);
      r.latency = await latencyRun(system, LATENCY.rate, LATENCY.seconds);
      log(`  median ${r.latency.medianMs.toFixed(1)} ms, p99 ${r.latency.p99Ms.toFixed(1)} ms`);
    } catch (e) {
      r.errors.push(`latency: ${describe(e)}`);
    }

  if (system.recoveryUnavailable !== undefined) {
    r.recoveryUnavailable = system.recoveryUnavailable;
  } else if (takesPart('recovery')) {
    log(`${system.name}: recovery, ${RECOVERY_JOBS} jobs in flight, SIGKILL`);
    try {
      r.recovery = await recoveryRun(system, RECOVERY_JOBS, RECOVERY_DEADLINE_MS);
      log(
        `  ${(r.recovery.recoveredMs / 1000).toFixed(2)} s (${r.recovery.restarted} restarted, ${r.recovery.failed} failed)`,
      );
    } catch (e) {
      r.errors.push(`recovery: ${describe(e)}`);
    }
  }
}

load.end = loadavg()[0] ?? 0;
const report = {
  date: new Date().toISOString(),
  durationS: Math.round((Date.now() - started) / 1000),
  machine,
  load,
  ceiling,
  latency: LATENCY,
  recoveryJobs: RECOVERY_JOBS,
  results,
};
const paths = writeReport(report, renderReport(report));
log(`wrote ${paths.join(', ')} in ${report.durationS} s`);
const failed = results.filter((r) => r.errors.length > 0);
if (failed.length > 0) {
  for (const r of failed) for (const e of r.errors) process.stderr.write(`${r.name}: ${e}\n`);
  process.exitCode = 1;
}
