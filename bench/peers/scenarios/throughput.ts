/**
 * Throughput: N no-op jobs enqueued in bulk into an idle worker process with
 * a limit of 20 running jobs, timed from the first enqueue until the store
 * says no job is left. The same run counts the server's commits and written
 * tuples for the writes-per-job figure.
 */

import type { QueryProfile } from '../queryProfile.js';
import { createScratch, dropScratch, readCounters, waitForNoBackends } from '../scratchDb.js';
import type { BenchSystem } from '../types.js';
import { startWorkerProcess } from '../workerProcess.js';
import { enqueuerFor } from './enqueuer.js';

export const CONCURRENCY = 20;
const POLL_MS = 20;

export interface ThroughputRun {
  jobs: number;
  elapsedMs: number;
  jobsPerSecond: number;
  /** Commits per job on the server, the bench's own progress polls subtracted. */
  commitsPerJob: number;
  /** Inserted + updated + deleted tuples per job. */
  tuplesPerJob: number;
  node: string;
  /** Statements the worker process sent through pg over the whole run (set-up included). */
  profile?: QueryProfile;
}

export async function throughputRun(
  system: BenchSystem,
  run: number,
  jobs: number,
  deadlineMs = 180_000,
): Promise<ThroughputRun> {
  const db = `peers_${system.name.replace(/[^a-z0-9]/g, '')}_tp_${run}`;
  const url = await createScratch(db);
  try {
    await system.setup(url, { recovery: false });
    const worker = await startWorkerProcess(system.name, url, {
      concurrency: CONCURRENCY,
      job: 'noop',
      recovery: false,
    });
    const client = await system.client(url);
    const keys = Array.from({ length: jobs }, (_, i) => `j${i}`);
    const before = await readCounters(db);

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
    await worker.waitFor(() => worker.starts.size >= jobs, 10_000, `all ${jobs} starts reported`);

    await worker.stop();
    await client.close();
    await waitForNoBackends(db);
    const after = await readCounters(db);
    return {
      jobs,
      elapsedMs,
      jobsPerSecond: (jobs / elapsedMs) * 1000,
      commitsPerJob: (after.xactCommit - before.xactCommit - polls) / jobs,
      tuplesPerJob: (after.tupWritten - before.tupWritten) / jobs,
      node: worker.node,
      ...(worker.profile() ? { profile: worker.profile() } : {}),
    };
  } finally {
    await dropScratch(db);
  }
}
