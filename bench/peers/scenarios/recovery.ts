/**
 * Recovery: a worker process holds 1,000 running jobs and is SIGKILLed. A
 * standby worker process takes over: by default it is already up (started
 * after the jobs were taken, so it holds none), as a second node would be;
 * with `recoveryStandby: 'after_kill'` it is started right after the kill, as
 * a restarted node would be, and its start-up is inside the time. The clock
 * runs from the kill until every one of the 1,000 jobs has started in the
 * standby or is marked failed for good by the system.
 */
import { createScratch, dropScratch, scratchName } from '../scratchDb.js';
import type { BenchSystem, WorkerMode } from '../types.js';
import { startWorkerProcess, type WorkerProcess } from '../workerProcess.js';
import { enqueuerFor } from './enqueuer.js';

export interface RecoveryResult {
  jobs: number;
  recoveredMs: number;
  restarted: number;
  failed: number;
  /** A standby started after the kill: ms from the kill until it was ready. */
  standbyReadyMs?: number;
  /** The system's own steps, ms after the kill (see `QueueClient.recoveryTimeline`). */
  timeline?: Record<string, number>;
}

export async function recoveryRun(
  system: BenchSystem,
  jobs: number,
  deadlineMs: number,
): Promise<RecoveryResult> {
  const db = scratchName(system.name, 'rec');
  const url = await createScratch(db);
  const mode: WorkerMode & { recovery: boolean } = {
    concurrency: jobs,
    job: 'hold',
    recovery: true,
    role: 'primary',
  };
  const standbyMode = { ...mode, role: 'standby' as const };
  const afterKill = system.recoveryStandby === 'after_kill';
  try {
    await system.setup(url, { recovery: true });
    const client = await system.client(url);
    const victim = await startWorkerProcess(system.name, url, mode);
    const keys = Array.from({ length: jobs }, (_, i) => `r${i}`);
    await enqueuerFor(system, client, victim).many(keys);
    await victim.waitFor(() => victim.starts.size >= jobs, 120_000, `${jobs} jobs running`);
    let standby: WorkerProcess | undefined = afterKill
      ? undefined
      : await startWorkerProcess(system.name, url, standbyMode);
    try {
      const t0 = performance.now();
      const killedAt = new Date();
      await victim.kill();
      await system.onWorkerDeath?.(url, victim.ids);
      standby ??= await startWorkerProcess(system.name, url, standbyMode);
      const readyMs = afterKill ? performance.now() - t0 : undefined;
      const s = standby;

      let failed = new Set<string>();
      const covered = (): boolean => keys.every((k) => s.starts.has(k) || failed.has(k));
      for (;;) {
        failed = new Set(await client.failedKeys());
        if (covered()) break;
        if (performance.now() - t0 > deadlineMs) {
          throw new Error(
            `${system.name}: ${s.starts.size} restarted, ${failed.size} failed of ${jobs} after ${deadlineMs} ms`,
          );
        }
        await Promise.race([
          s.waitFor(covered, 100, 'coverage').catch(() => undefined),
          new Promise((r) => setTimeout(r, 100)),
        ]);
      }
      const recoveredMs = performance.now() - t0;
      const timeline = await client.recoveryTimeline?.(killedAt, victim.ids);
      return {
        ...(timeline ? { timeline } : {}),
        ...(readyMs !== undefined ? { standbyReadyMs: readyMs } : {}),
        jobs,
        recoveredMs,
        restarted: keys.filter((k) => s.starts.has(k)).length,
        failed: keys.filter((k) => failed.has(k) && !s.starts.has(k)).length,
      };
    } finally {
      // Each step whatever the one before did: a client left open when a
      // kill threw had its idle connection ended by the scratch drop below,
      // an 'error' no one listened to, and the bench process died with it.
      try {
        await standby?.kill();
      } finally {
        try {
          await victim.kill();
        } finally {
          await client.close();
        }
      }
    }
  } finally {
    await dropScratch(db);
  }
}
