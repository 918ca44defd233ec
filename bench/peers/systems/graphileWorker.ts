/**
 * graphile-worker 0.18 adapter. Settings follow its performance page
 * (worker.graphile.org/docs/performance): `concurrentJobs` is the number of
 * jobs run at once, the pool one connection more, and the batching options
 * `localQueue.size`, `completeJobBatchDelay: 0`, `failJobBatchDelay: 0` that
 * page uses for its throughput figures. New jobs wake workers through
 * LISTEN/NOTIFY, which graphile-worker always uses; `pollInterval` (2 s
 * default) only matters for jobs scheduled in the future.
 */

import { EventEmitter } from 'node:events';
import { Logger, makeWorkerUtils, run, runMigrations, type WorkerEvents } from 'graphile-worker';
import pg from 'pg';
import type { BenchSystem, QueueClient, WorkerHandle } from '../types.js';

const TASK = 'bench';
const LOCAL_QUEUE = 500;

/** Keeps errors and warnings, drops the per-job info lines. */
const logger = new Logger(() => (level, message) => {
  if (level === 'error' || level === 'warning')
    process.stderr.write(`graphile-worker ${level}: ${message}\n`);
});

function hold(): Promise<never> {
  // A job that outlives the test: the worker process is SIGKILLed while in it.
  return new Promise<never>(() => {
    setTimeout(() => undefined, 3_600_000);
  });
}

function keyOf(payload: unknown): string {
  if (typeof payload === 'object' && payload !== null && 'k' in payload) {
    const k = (payload as { k: unknown }).k;
    if (typeof k === 'string') return k;
  }
  throw new TypeError(`bench job without a key: ${JSON.stringify(payload)}`);
}

export const graphileWorker: BenchSystem = {
  name: 'graphile-worker',
  version: 'graphile-worker 0.18.0',
  settings: {
    'run()': `concurrency 20, maxPoolSize 21, localQueue.size ${LOCAL_QUEUE}, completeJobBatchDelay 0, failJobBatchDelay 0, pollInterval 2000 (default)`,
    'job wake-up': 'LISTEN/NOTIFY (always on)',
    'recovery test':
      'concurrency 1000, maxPoolSize 25; forceUnlockWorkers(ids of the dead process) called when the bench sees the process exit',
  },
  recovery: {
    defaultBehaviour:
      'a job locked by a worker that died stays locked until its lock is 4 hours old (fixed interval in the SQL, not an option), then runs again',
    measuredWith:
      'the documented manual path: the supervising process calls workerUtils.forceUnlockWorkers(workerIds) for the dead process as soon as it sees it exit; a standby worker process then takes the jobs',
  },

  async setup(url) {
    await runMigrations({ connectionString: url, logger });
  },

  async client(url): Promise<QueueClient> {
    const utils = await makeWorkerUtils({ connectionString: url, logger });
    const pool = new pg.Pool({ connectionString: url, max: 2 });
    // An idle connection ended under it (the scratch database dropped) is not the bench's failure.
    pool.on('error', () => undefined);
    return {
      async enqueueMany(keys) {
        for (let i = 0; i < keys.length; i += 1000) {
          await utils.addJobs(
            keys.slice(i, i + 1000).map((k) => ({ identifier: TASK, payload: { k } })),
          );
        }
      },
      async enqueueOne(key) {
        await utils.addJob(TASK, { k: key });
      },
      async pending() {
        const r = await pool.query<{ n: string }>(
          'select count(*) as n from graphile_worker._private_jobs where attempts < max_attempts or locked_at is not null',
        );
        return Number(r.rows[0]?.n ?? 0);
      },
      async failedKeys() {
        const r = await pool.query<{ k: string }>(
          `select payload->>'k' as k from graphile_worker._private_jobs
            where attempts >= max_attempts and locked_at is null`,
        );
        return r.rows.map((row) => row.k);
      },
      async close() {
        await utils.release();
        await pool.end();
      },
    };
  },

  async startWorker(url, mode, onStart): Promise<WorkerHandle> {
    const events: WorkerEvents = new EventEmitter() as WorkerEvents;
    const ids: string[] = [];
    events.on('pool:create', ({ workerPool }) => ids.push(workerPool.id));
    events.on('worker:create', ({ worker }) => ids.push(worker.workerId));
    const runner = await run({
      connectionString: url,
      concurrency: mode.concurrency,
      maxPoolSize: Math.min(mode.concurrency + 1, 25),
      noHandleSignals: true,
      logger,
      events,
      taskList: {
        [TASK]: async (payload) => {
          onStart(keyOf(payload));
          if (mode.job === 'hold') await hold();
        },
      },
      preset: {
        worker: {
          localQueue: { size: LOCAL_QUEUE },
          completeJobBatchDelay: 0,
          failJobBatchDelay: 0,
        },
      },
    });
    return {
      ids,
      async stop() {
        await runner.stop();
      },
    };
  },

  async onWorkerDeath(url, deadWorkerIds) {
    const utils = await makeWorkerUtils({ connectionString: url, logger });
    try {
      await utils.forceUnlockWorkers([...deadWorkerIds]);
    } finally {
      await utils.release();
    }
  },
};
