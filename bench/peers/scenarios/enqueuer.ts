/**
 * Where a scenario's enqueues go: the system's client in the bench process,
 * or its worker process for a system whose jobs are submitted there
 * (`enqueuesInWorker`: roundtable's runtime).
 */
import type { BenchSystem, QueueClient } from '../types.js';
import type { WorkerProcess } from '../workerProcess.js';

export interface Enqueuer {
  many(keys: readonly string[]): Promise<void>;
  one(key: string): Promise<void>;
}

export function enqueuerFor(
  system: BenchSystem,
  client: QueueClient,
  worker: WorkerProcess,
): Enqueuer {
  if (system.enqueuesInWorker === true) {
    return { many: (keys) => worker.enqueue(keys), one: (key) => worker.enqueue([key]) };
  }
  return { many: (keys) => client.enqueueMany(keys), one: (key) => client.enqueueOne(key) };
}
