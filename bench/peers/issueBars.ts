/**
 * Issue 15's bars, judged on one peers run: what a reader of the report
 * wants first (is each bar met in this run?), computed from the same rows
 * the tables below it show, so the judgement cannot drift from them. A bar
 * whose rows did not run says so instead of passing.
 */
import type { PeersReport, SystemResult } from './report.js';

export type Verdict = 'met' | 'not met' | 'not run';

export interface BarRow {
  bar: string;
  /** The figure of this run the verdict is made of. */
  figure: string;
  verdict: Verdict;
}

const CAPS = 'roundtable-caps100';
const ONE_NODE_PEER = 'graphile-worker';

function rowOf(p: PeersReport, name: string): SystemResult | undefined {
  return p.results.find((r) => r.name === name && r.unavailable === undefined);
}

const jobsPerSecond = (r: SystemResult | undefined): number | undefined =>
  r?.throughput?.medianJobsPerSecond;

const judge = (ok: boolean): Verdict => (ok ? 'met' : 'not met');
const f2 = (n: number): string => n.toFixed(2);
const f0 = (n: number): string => Math.round(n).toLocaleString('en-US');

/** A throughput ratio of two rows' medians against `atLeast`. */
function ratioBar(p: PeersReport, bar: string, a: string, b: string, atLeast: number): BarRow {
  const ra = jobsPerSecond(rowOf(p, a));
  const rb = jobsPerSecond(rowOf(p, b));
  if (ra === undefined || rb === undefined) return { bar, figure: '', verdict: 'not run' };
  const ratio = ra / rb;
  return {
    bar,
    figure: `${f0(ra)} / ${f0(rb)} jobs/s = ${f2(ratio)}`,
    verdict: judge(ratio >= atLeast),
  };
}

/** A per-job figure against its ceiling. */
function atMost(bar: string, value: number | undefined, limit: number): BarRow {
  if (value === undefined) return { bar, figure: '', verdict: 'not run' };
  return { bar, figure: f2(value), verdict: judge(value <= limit) };
}

/** Statements the caps-on row's worker sent per job, from its first run's profile. */
function statementsPerJob(r: SystemResult | undefined): number | undefined {
  const run = r?.throughput?.runs[0];
  if (run?.profile === undefined) return undefined;
  const total = Object.values(run.profile.statements).reduce((x, y) => x + y, 0);
  return total / run.jobs;
}

/**
 * The bars this run can judge, in the issue's order.
 *
 * @example
 * const row = (name, jobsPerSecond) => ({ name, errors: [], throughput: { jobs: 1000, runs: [],
 *   medianJobsPerSecond: jobsPerSecond, medianCommitsPerJob: 0.07, medianTuplesPerJob: 8.3 } });
 * const run = { results: [row('graphile-worker', 11870), row('roundtable-caps100', 815)] };
 * issueBars(run)[0].figure // => '815 / 11,870 jobs/s = 0.07'
 * issueBars(run)[0].verdict // => 'not met'
 * issueBars(run)[1].verdict // => 'not run'
 * issueBars(run)[3] // => { bar: 'commits per job ≤ 0.2 (caps on)', figure: '0.07', verdict: 'met' }
 */
export function issueBars(p: PeersReport): BarRow[] {
  const caps = rowOf(p, CAPS);
  const rows: BarRow[] = [
    ratioBar(
      p,
      'caps on, 100 users, cap 1, global 20: ≥ 0.5× tuned graphile-worker',
      CAPS,
      ONE_NODE_PEER,
      0.5,
    ),
    ratioBar(p, '3 node processes: ≥ 0.8× one node (caps on)', 'roundtable-3nodes', CAPS, 0.8),
  ];
  const lat = caps?.latency;
  rows.push(
    lat === undefined
      ? { bar: 'latency, caps on: p50 ≤ 5 ms, p99 ≤ 15 ms', figure: '', verdict: 'not run' }
      : {
          bar: 'latency, caps on: p50 ≤ 5 ms, p99 ≤ 15 ms',
          figure: `p50 ${lat.medianMs.toFixed(1)} ms, p99 ${lat.p99Ms.toFixed(1)} ms`,
          verdict: judge(lat.medianMs <= 5 && lat.p99Ms <= 15),
        },
  );
  rows.push(
    atMost('commits per job ≤ 0.2 (caps on)', caps?.throughput?.medianCommitsPerJob, 0.2),
    atMost('statements per job ≤ 0.5 (caps on)', statementsPerJob(caps), 0.5),
  );
  return rows;
}

/** The report's section: the bars, then the floor for scale (no bar of its own). */
export function barsSection(p: PeersReport): string[] {
  const floor = ratioBar(p, '', 'roundtable-floor', ONE_NODE_PEER, 0);
  return [
    '',
    "## Issue 15's bars in this run",
    '',
    'Judged on this run alone (medians; the run-by-run ranges are in "Ratios"). The bars for boot, a DOWN to the next grant and node CPU flat in queue depth are measured by `npm run bench -- dispatch`, not here.',
    '',
    '| bar | this run | |',
    '|---|---|---|',
    ...issueBars(p).map((r) => `| ${r.bar} | ${r.figure} | ${r.verdict} |`),
    ...(floor.verdict === 'not run'
      ? []
      : [
          `| (no bar) the row writes alone under the tick's lock, against graphile-worker: what any tick over this schema could reach | ${floor.figure} | |`,
        ]),
  ];
}
