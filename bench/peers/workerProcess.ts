/**
 * The parent's side of a worker child: forks it, waits for it to be ready,
 * collects job starts, stops it gracefully or SIGKILLs it.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { QueryProfile } from './queryProfile.js';
import type { WorkerMode } from './types.js';
import type { ChildMessage } from './workerProtocol.js';

const ENTRY = fileURLToPath(new URL('./workerChild.ts', import.meta.url));

export interface WorkerProcess {
  readonly ids: readonly string[];
  /** Node version the child runs on. */
  readonly node: string;
  /** Start time (epoch ms, sub-ms precision) of each job key, first start only. */
  readonly starts: Map<string, number>;
  /** Every start seen, including repeats of a key. */
  startCount(): number;
  /** Resolves when `pred` holds after a start batch; rejects at the deadline. */
  waitFor(pred: () => boolean, deadlineMs: number, what: string): Promise<void>;
  /** Enqueues through the worker (systems with `enqueuesInWorker`); resolves when it has. */
  enqueue(keys: readonly string[], deadlineMs?: number): Promise<void>;
  /** CPU the worker process (and the node processes it started) used so far. */
  cpu(): Promise<NodeJS.CpuUsage>;
  /** Statements the worker sent, handed over by a graceful stop (undefined after a kill). */
  profile(): QueryProfile | undefined;
  stop(deadlineMs?: number): Promise<void>;
  kill(): Promise<void>;
}

export class DeadlineError extends Error {
  override readonly name = 'DeadlineError';
  readonly code = 'BENCH_DEADLINE';
}

export async function startWorkerProcess(
  system: string,
  url: string,
  mode: WorkerMode & { recovery: boolean },
  readyDeadlineMs = 30_000,
  opts: {
    /** Runs one extra node of a multi-node roundtable worker (see workerChild.ts). */
    nodeId?: string;
    /** Every batch of starts, as it arrives. */
    onStarted?: (keys: readonly string[]) => void;
  } = {},
): Promise<WorkerProcess> {
  const args = [system, url, JSON.stringify(mode), ...(opts.nodeId ? [opts.nodeId] : [])];
  const child: ChildProcess = fork(ENTRY, args, {
    execArgv: ['--import', 'tsx', ...profileArgs()],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const starts = new Map<string, number>();
  let count = 0;
  let profile: QueryProfile | undefined;
  let nextEnqueue = 1;
  const enqueues = new Map<number, (error?: string) => void>();
  const cpus = new Map<number, (usage: NodeJS.CpuUsage) => void>();
  const waiters = new Set<() => void>();
  const exited = new Promise<void>((resolve) =>
    child.once('exit', () => {
      for (const settle of enqueues.values()) settle('the worker process exited');
      enqueues.clear();
      resolve();
    }),
  );

  const ready = new Promise<{ ids: string[]; node: string }>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new DeadlineError(`${system} worker not ready after ${readyDeadlineMs} ms`)),
      readyDeadlineMs,
    );
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${system} worker exited before ready (${code ?? signal})`));
    });
    child.on('message', (m: ChildMessage) => {
      if (m.type === 'ready') {
        clearTimeout(timer);
        resolve({ ids: m.ids, node: m.node });
      } else if (m.type === 'started') {
        count += m.keys.length;
        m.keys.forEach((k, i) => {
          if (!starts.has(k)) starts.set(k, m.at[i]!);
        });
        opts.onStarted?.(m.keys);
        for (const w of waiters) w();
      } else if (m.type === 'cpu') {
        cpus.get(m.id)?.(m.usage);
        cpus.delete(m.id);
      } else if (m.type === 'enqueued') {
        enqueues.get(m.id)?.(m.error);
        enqueues.delete(m.id);
      } else if (m.type === 'stopped') {
        profile = m.profile;
      }
    });
  });
  const info = await ready;

  return {
    ids: info.ids,
    node: info.node,
    starts,
    startCount: () => count,
    waitFor(pred, deadlineMs, what) {
      if (pred()) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const check = (): void => {
          if (!pred()) return;
          cleanup();
          resolve();
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new DeadlineError(`${system}: ${what} not reached within ${deadlineMs} ms`));
        }, deadlineMs);
        const cleanup = (): void => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
      });
    },
    enqueue(keys, deadlineMs = 600_000) {
      const id = nextEnqueue++;
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => {
          enqueues.delete(id);
          reject(
            new DeadlineError(`${system}: enqueue of ${keys.length} not done in ${deadlineMs} ms`),
          );
        }, deadlineMs);
        enqueues.set(id, (error) => {
          clearTimeout(timer);
          if (error === undefined) resolve();
          else reject(new Error(`${system} worker enqueue failed: ${error}`));
        });
        child.send({ type: 'enqueue', id, keys: [...keys] });
      });
    },
    cpu() {
      const id = nextEnqueue++;
      return new Promise<NodeJS.CpuUsage>((resolve, reject) => {
        const timer = setTimeout(() => {
          cpus.delete(id);
          reject(new DeadlineError(`${system}: no cpu usage reply`));
        }, 10_000);
        cpus.set(id, (u) => {
          clearTimeout(timer);
          resolve(u);
        });
        child.send({ type: 'cpu', id });
      });
    },
    profile: () => profile,
    async stop(deadlineMs = 15_000) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.send({ type: 'stop' });
      const timer = setTimeout(() => child.kill('SIGKILL'), deadlineMs);
      await exited;
      clearTimeout(timer);
    },
    async kill() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGKILL');
      await exited;
    },
  };
}

/** PEERS_PROF (bench/peers/run.ts): a CPU profile of the worker, written as it exits. */
function profileArgs(): string[] {
  const dir = process.env.PEERS_PROF;
  return dir === undefined || dir === '' ? [] : ['--cpu-prof', `--cpu-prof-dir=${dir}`];
}
