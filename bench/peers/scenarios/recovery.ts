/**
 * Recovery: a worker process holds 1,000 running jobs and is SIGKILLed. A
 * standby worker process (started after the jobs were taken, so it holds
 * none) is already up, as a second node or a restarted one would be. The
 * clock runs from the kill until every one of the 1,000 jobs has started in
 * the standby or is marked failed by the system.
 */
import { createScratch, dropScratch } from '../scratchDb.js';
import type { BenchSystem, WorkerMode } from '../types.js';
import { startWorkerProcess } from '../workerProcess.js';

export interface RecoveryResult {
  jobs: number;
  recoveredMs: number;
  restarted: number;
  failed: number;
}

export async function recoveryRun(
  system: BenchSystem,
  jobs: number,
  deadlineMs: number,
): Promise<RecoveryResult> {
  const db = `peers_${system.name.replace(/[^a-z0-9]/g, '')}_rec`;
  const url = await createScratch(db);
  const mode: WorkerMode & { recovery: boolean } = {
    concurrency: jobs,
    job: 'hold',
    recovery: true,
  };
  try {
    await system.setup(url, { recovery: true });
    const client = await system.client(url);
    const victim = await startWorkerProcess(system.name, url, mode);
    const keys = Array.from({ length: jobs }, (_, i) => `r${i}`);
    await client.enqueueMany(keys);
    await victim.waitFor(() => victim.starts.size >= jobs, 60_000, `${jobs} jobs running`);
    const standby = await startWorkerProcess(system.name, url, mode);
    try {
      const t0 = performance.now();
      await victim.kill();
      await system.onWorkerDeath?.(url, victim.ids);

      let failed = new Set<string>();
      const covered = (): boolean => keys.every((k) => standby.starts.has(k) || failed.has(k));
      for (;;) {
        failed = new Set(await client.failedKeys());
        if (covered()) break;
        if (performance.now() - t0 > deadlineMs) {
          throw new Error(
            `${system.name}: ${standby.starts.size} restarted, ${failed.size} failed of ${jobs} after ${deadlineMs} ms`,
          );
        }
        await Promise.race([
          standby.waitFor(covered, 100, 'coverage').catch(() => undefined),
          new Promise((r) => setTimeout(r, 100)),
        ]);
      }
      const recoveredMs = performance.now() - t0;
      return {
        jobs,
        recoveredMs,
        restarted: keys.filter((k) => standby.starts.has(k)).length,
        failed: keys.filter((k) => failed.has(k) && !standby.starts.has(k)).length,
      };
    } finally {
      await standby.kill();
      await client.close();
    }
  } finally {
    await dropScratch(db);
  }
}
