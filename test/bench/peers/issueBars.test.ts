import { describe, expect, it } from 'vitest';
import * as bars from '../../../bench/peers/issueBars.js';
import type { PeersReport, SystemResult } from '../../../bench/peers/report.js';
import { runDocExamples } from '../../support/docExamples.js';

runDocExamples(new URL('../../../bench/peers/issueBars.ts', import.meta.url), bars);

const row = (name: string, jobsPerSecond: number, extra: Partial<SystemResult> = {}) =>
  ({
    name,
    errors: [],
    throughput: {
      jobs: 1000,
      runs: [],
      medianJobsPerSecond: jobsPerSecond,
      medianCommitsPerJob: 0.3,
      medianTuplesPerJob: 8,
    },
    ...extra,
  }) as SystemResult;
const report = (results: SystemResult[]) => ({ results }) as unknown as PeersReport;

describe('issue 15 bars of a peers run', () => {
  it('judges each bar on its edge: a ratio or a figure exactly at the bar meets it', () => {
    const run = report([
      row('graphile-worker', 1000),
      row('roundtable-caps100', 500, {
        latency: { ratePerSecond: 20, jobs: 600, medianMs: 5, p99Ms: 15.01, maxMs: 30 },
      }),
      row('roundtable-3nodes', 400),
    ]);
    expect(bars.issueBars(run).map((r) => r.verdict)).toEqual([
      'met', // 500 / 1000 = 0.5
      'met', // 400 / 500 = 0.8
      'not met', // p99 over 15
      'not met', // 0.3 commits per job
      'not run', // no profile
    ]);
  });

  it('does not judge a row that was unavailable', () => {
    const run = report([
      { name: 'graphile-worker', errors: [], unavailable: 'not installed' },
      row('roundtable-caps100', 500),
    ]);
    expect(bars.issueBars(run)[0]?.verdict).toBe('not run');
  });

  it('shows the floor for scale only when its row ran', () => {
    const without = bars.barsSection(report([row('graphile-worker', 1000)])).join('\n');
    expect(without).not.toContain('row writes alone');
    const withFloor = bars
      .barsSection(report([row('graphile-worker', 1000), row('roundtable-floor', 310)]))
      .join('\n');
    expect(withFloor).toContain('310 / 1,000 jobs/s = 0.31');
  });
});
