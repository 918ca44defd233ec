/**
 * pg-boss 12 adapter. Settings follow the option docs shipped in pg-boss's
 * own types (dist/types.d.ts): a worker fetches `batchSize` jobs per query and
 * with `burstWhenBatchFull` fetches again at once while batches come back
 * full; LISTEN/NOTIFY (`useListenNotify` + queue `notify`) wakes idle workers
 * instead of the 2 s default poll. One `work()` with batchSize 20 keeps at
 * most 20 jobs running in the process: the global limit of the workload.
 */
import pg from 'pg';
import { PgBoss } from 'pg-boss';
import type { BenchSystem, QueueClient, WorkerHandle } from '../types.js';

const QUEUE = 'bench';
const BATCH = 20;
/** Smallest values the docs allow: heartbeatSeconds >= 10, supervise/monitor >= 1 s. */
const RECOVERY = { heartbeatSeconds: 10, superviseIntervalSeconds: 1, monitorIntervalSeconds: 1 };

interface BenchData {
  k: string;
}

function onError(e: unknown): void {
  process.stderr.write(`pg-boss error: ${e instanceof Error ? e.message : String(e)}\n`);
}

function hold(): Promise<never> {
  // A job that outlives the test: the worker process is SIGKILLed while in it.
  return new Promise<never>(() => {
    setTimeout(() => undefined, 3_600_000);
  });
}

export const pgBoss: BenchSystem = {
  name: 'pg-boss',
  version: 'pg-boss 12.38.0',
  settings: {
    'work()': `batchSize ${BATCH}, localConcurrency 1 (= at most ${BATCH} running), burstWhenBatchFull true, pollingIntervalSeconds 0.5`,
    constructor: 'useListenNotify true; queue created with notify true; pool max 10 (default)',
    'recovery test': `queue heartbeatSeconds ${RECOVERY.heartbeatSeconds}, superviseIntervalSeconds ${RECOVERY.superviseIntervalSeconds}, monitorIntervalSeconds ${RECOVERY.monitorIntervalSeconds}, notifyPollingIntervalSeconds 0.5; 50 work() loops x batchSize 20 = 1,000 held`,
  },
  recovery: {
    defaultBehaviour:
      'heartbeat off by default; an active job expires after expireInSeconds = 900 s (15 min), checked every max(superviseIntervalSeconds, monitorIntervalSeconds) = 60 s, then retried (retryLimit 2): about 15-16 min',
    measuredWith:
      'the documented minimums: queue heartbeatSeconds 10, supervise and monitor every 1 s, and notifyPollingIntervalSeconds 0.5 on the standby, because retried jobs send no NOTIFY and the default 30 s backstop poll adds up to 30 s (about 30 s measured while building this bench)',
  },

  async setup(url, opts) {
    const boss = new PgBoss({ connectionString: url, supervise: false, schedule: false });
    boss.on('error', onError);
    await boss.start();
    await boss.createQueue(QUEUE, {
      notify: true,
      ...(opts.recovery ? { heartbeatSeconds: RECOVERY.heartbeatSeconds } : {}),
    });
    await boss.stop({ graceful: false, close: true });
  },

  async client(url): Promise<QueueClient> {
    const boss = new PgBoss({
      connectionString: url,
      supervise: false,
      schedule: false,
      migrate: false,
    });
    boss.on('error', onError);
    await boss.start();
    const pool = new pg.Pool({ connectionString: url, max: 2 });
    // An idle connection ended under it (the scratch database dropped) is not the bench's failure.
    pool.on('error', () => undefined);
    return {
      async enqueueMany(keys) {
        for (let i = 0; i < keys.length; i += 1000) {
          await boss.insert(
            QUEUE,
            keys.slice(i, i + 1000).map((k) => ({ data: { k } })),
          );
        }
      },
      async enqueueOne(key) {
        await boss.send(QUEUE, { k: key });
      },
      async pending() {
        const r = await pool.query<{ n: string }>(
          "select count(*) as n from pgboss.job where name = $1 and state in ('created', 'retry', 'active')",
          [QUEUE],
        );
        return Number(r.rows[0]?.n ?? 0);
      },
      async failedKeys() {
        const r = await pool.query<{ k: string }>(
          "select data->>'k' as k from pgboss.job where name = $1 and state = 'failed'",
          [QUEUE],
        );
        return r.rows.map((row) => row.k);
      },
      async close() {
        await boss.stop({ graceful: false, close: true });
        await pool.end();
      },
    };
  },

  async startWorker(url, mode, onStart): Promise<WorkerHandle> {
    const boss = new PgBoss({
      connectionString: url,
      useListenNotify: true,
      migrate: false,
      schedule: false,
      ...(mode.recovery
        ? {
            superviseIntervalSeconds: RECOVERY.superviseIntervalSeconds,
            monitorIntervalSeconds: RECOVERY.monitorIntervalSeconds,
          }
        : {}),
    });
    boss.on('error', onError);
    await boss.start();
    const batchSize = Math.min(BATCH, mode.concurrency);
    const id = await boss.work<BenchData>(
      QUEUE,
      {
        batchSize,
        localConcurrency: Math.max(1, Math.floor(mode.concurrency / batchSize)),
        burstWhenBatchFull: true,
        pollingIntervalSeconds: 0.5,
        // Retried jobs are not announced by NOTIFY, so a standby finds them on
        // its backstop poll: 30 s by default, the documented minimum here.
        ...(mode.recovery ? { notifyPollingIntervalSeconds: 0.5 } : {}),
      },
      async (jobs) => {
        for (const job of jobs) onStart(job.data.k);
        if (mode.job === 'hold') await hold();
      },
    );
    return {
      ids: [id],
      async stop() {
        await boss.stop({ graceful: true, timeout: 5_000, close: true });
      },
    };
  },
};
