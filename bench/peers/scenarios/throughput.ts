/**
 * Throughput: N no-op jobs enqueued in bulk into an idle worker process with
 * a limit of 20 running jobs, timed from the first enqueue until the store
 * says no job is left. The same run counts the server's commits and written
 * tuples for the writes-per-job figure.
 */

import type { QueryProfile } from '../queryProfile.js';
import {
  createScratch,
  dropScratch,
  type FunctionTime,
  readCounters,
  readFunctionTimes,
  scratchName,
  trackFunctions,
  waitForNoBackends,
} from '../scratchDb.js';
import type { BenchSystem } from '../types.js';
import { startWorkerProcess } from '../workerProcess.js';
import { enqueuerFor } from './enqueuer.js';

export const CONCURRENCY = 20;
const POLL_MS = 20;

export interface ThroughputRun {
  jobs: number;
  elapsedMs: number;
  jobsPerSecond: number;
  /**
   * Jobs per second between the 25th and the 75th percentile of the jobs'
   * start times: the run with its first burst of enqueues (and its drain)
   * left out, so what a burst costs shows as the gap to `jobsPerSecond`.
   */
  steadyJobsPerSecond: number;
  /** Commits per job on the server, the bench's own progress polls subtracted. */
  commitsPerJob: number;
  /** Inserted + updated + deleted tuples per job. */
  tuplesPerJob: number;
  node: string;
  /** Statements the worker process sent through pg over the whole run (set-up included). */
  profile?: QueryProfile;
  /** CPU (user + system) of the worker's node process(es) from the first enqueue to done, per job. */
  nodeCpuUsPerJob?: number;
  /** pg_stat_database.active_time over the run, per job: the server's time executing statements. */
  dbActiveUsPerJob?: number;
  /** pg_stat_user_functions over the run (track_functions = 'pl'), the busiest first. */
  functions?: (FunctionTime & { usPerJob: number })[];
}

/**
 * Starts per second over the middle half of the start times (ms).
 *
 * @example
 * ```ts
 * middleRate([0, 10, 20, 30, 40, 50, 60, 70, 80]) // => 100
 * ```
 */
export function middleRate(startsMs: readonly number[]): number {
  const t = [...startsMs].sort((a, b) => a - b);
  const lo = Math.floor(t.length / 4);
  const hi = Math.floor((t.length * 3) / 4);
  const span = (t[hi] ?? 0) - (t[lo] ?? 0);
  return span > 0 ? ((hi - lo) / span) * 1000 : Number.NaN;
}

export async function throughputRun(
  system: BenchSystem,
  run: number,
  jobs: number,
  deadlineMs = 180_000,
): Promise<ThroughputRun> {
  const db = scratchName(system.name, `tp_${run}`);
  const url = await createScratch(db);
  try {
    await trackFunctions(db);
    await system.setup(url, { recovery: false });
    const worker = await startWorkerProcess(system.name, url, {
      concurrency: CONCURRENCY,
      job: 'noop',
      recovery: false,
    });
    const client = await system.client(url);
    const keys = Array.from({ length: jobs }, (_, i) => `j${i}`);
    const before = await readCounters(db);
    const fnBefore = await readFunctionTimes(db);
    const cpu0 = await worker.cpu();

    const t0 = performance.now();
    await enqueuerFor(system, client, worker).many(keys);
    let polls = 0;
    for (;;) {
      polls++;
      if ((await client.pending()) === 0) break;
      if (performance.now() - t0 > deadlineMs) {
        throw new Error(`${system.name}: ${jobs} jobs not done within ${deadlineMs} ms`);
      }
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
    const elapsedMs = performance.now() - t0;
    const cpu1 = await worker.cpu();
    await worker.waitFor(() => worker.starts.size >= jobs, 10_000, `all ${jobs} starts reported`);

    await worker.stop();
    await client.close();
    await waitForNoBackends(db);
    const after = await readCounters(db);
    const fnAfter = await readFunctionTimes(db);
    const functions = fnAfter
      .map((f) => {
        const b = fnBefore.find((x) => x.name === f.name);
        const totalMs = f.totalMs - (b?.totalMs ?? 0);
        return {
          name: f.name,
          calls: f.calls - (b?.calls ?? 0),
          totalMs,
          selfMs: f.selfMs - (b?.selfMs ?? 0),
          usPerJob: (totalMs * 1000) / jobs,
        };
      })
      .filter((f) => f.calls > 0)
      .sort((a, b) => b.totalMs - a.totalMs)
      .slice(0, 5);
    return {
      jobs,
      elapsedMs,
      jobsPerSecond: (jobs / elapsedMs) * 1000,
      steadyJobsPerSecond: middleRate([...worker.starts.values()]),
      commitsPerJob: (after.xactCommit - before.xactCommit - polls) / jobs,
      tuplesPerJob: (after.tupWritten - before.tupWritten) / jobs,
      nodeCpuUsPerJob: (cpu1.user - cpu0.user + cpu1.system - cpu0.system) / jobs,
      dbActiveUsPerJob: ((after.activeMs - before.activeMs) * 1000) / jobs,
      functions,
      node: worker.node,
      ...(worker.profile() ? { profile: worker.profile() } : {}),
    };
  } finally {
    await dropScratch(db);
  }
}
