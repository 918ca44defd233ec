/**
 * Latency: jobs enqueued one at a time at a steady low rate into an idle
 * worker; enqueue-to-start is measured from just before the enqueue call to
 * the first line of the handler (both clocks are the machine's wall clock).
 */
import { median, percentile } from '../../stats.js';
import { createScratch, dropScratch, scratchName } from '../scratchDb.js';
import type { BenchSystem } from '../types.js';
import { startWorkerProcess } from '../workerProcess.js';
import { enqueuerFor } from './enqueuer.js';
import { CONCURRENCY } from './throughput.js';

export interface LatencyResult {
  ratePerSecond: number;
  jobs: number;
  medianMs: number;
  p99Ms: number;
  maxMs: number;
}

export async function latencyRun(
  system: BenchSystem,
  ratePerSecond: number,
  seconds: number,
): Promise<LatencyResult> {
  const db = scratchName(system.name, 'lat');
  const url = await createScratch(db);
  try {
    await system.setup(url, { recovery: false });
    const worker = await startWorkerProcess(system.name, url, {
      concurrency: CONCURRENCY,
      job: 'noop',
      recovery: false,
    });
    const client = await system.client(url);
    const enqueue = enqueuerFor(system, client, worker);
    // One untimed job first, so connection set-up is not in the first sample.
    await enqueue.one('warmup');
    await worker.waitFor(() => worker.starts.has('warmup'), 10_000, 'warm-up job');

    const jobs = ratePerSecond * seconds;
    const gap = 1000 / ratePerSecond;
    const enqueuedAt = new Map<string, number>();
    const sends: Promise<void>[] = [];
    const t0 = performance.now();
    for (let i = 0; i < jobs; i++) {
      const wait = t0 + i * gap - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const key = `l${i}`;
      enqueuedAt.set(key, performance.timeOrigin + performance.now());
      sends.push(enqueue.one(key));
    }
    await Promise.all(sends);
    await worker.waitFor(
      () => [...enqueuedAt.keys()].every((k) => worker.starts.has(k)),
      30_000,
      `all ${jobs} latency jobs started`,
    );
    const samples = [...enqueuedAt].map(([k, at]) => worker.starts.get(k)! - at);
    await worker.stop();
    await client.close();
    return {
      ratePerSecond,
      jobs,
      medianMs: median(samples),
      p99Ms: percentile(samples, 99),
      maxMs: Math.max(...samples),
    };
  } finally {
    await dropScratch(db);
  }
}
