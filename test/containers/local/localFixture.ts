/**
 * Local backends over one temp directory: a new backend over the same
 * directory is what the node sees after a restart. Real processes, so waits
 * are real; each is bounded by its deadline.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import type { RunRef } from '../../../src/containers/ContainerBackend.js';
import {
  LocalBackend,
  type LocalBackendOptions,
} from '../../../src/containers/local/LocalBackend.js';
import { parseLocalHandle } from '../../../src/containers/local/localHandle.js';
import { sameProcess } from '../../../src/containers/local/observeLocalRun.js';
import { hostProcessTable } from '../../../src/containers/local/processTable.js';
import type { ContractFixture } from '../contract.js';
import { busyboxCommands } from '../docker/realFixture.js';
import { testNamespace } from '../testNamespace.js';

export interface LocalFixture extends ContractFixture {
  backend: LocalBackend;
  baseDir: string;
  make(options?: Partial<LocalBackendOptions>): LocalBackend;
  /** Processes a test started outside any backend, killed after the file. */
  strays: number[];
}

export async function until<T>(
  check: () => Promise<T | undefined> | T | undefined,
  ms: number,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() >= deadline) throw new Error(`not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Whether `pid` (or, negative, a process group) still exists. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

const NS_LAST_PID = '/proc/sys/kernel/ns_last_pid';

/** Whether this test run may choose the next pid (root on Linux): then pid reuse can be real. */
export function canChoosePids(): boolean {
  try {
    writeFileSync(NS_LAST_PID, readFileSync(NS_LAST_PID, 'utf8'));
    return true;
  } catch {
    return false;
  }
}

/**
 * Starts `sleep 600` with exactly `pid`, by setting the kernel's last pid
 * just below it; other processes fork too, so it retries. Null if it never won.
 */
export async function spawnWithPid(pid: number, strays: number[]): Promise<number | null> {
  for (let attempt = 0; attempt < 200; attempt++) {
    writeFileSync(NS_LAST_PID, String(pid - 1));
    const child = spawn('sleep', ['600'], { detached: true, stdio: 'ignore' });
    child.unref();
    if (child.pid === pid) {
      strays.push(pid);
      return pid;
    }
    // Killed now, while it is surely ours: a pid kept for the teardown could
    // belong to another process by then.
    if (child.pid !== undefined) process.kill(child.pid, 'SIGKILL');
  }
  return null;
}

export function localFixture(): LocalFixture {
  const baseDir = mkdtempSync(join(tmpdir(), 'rt-local-'));
  const namespace = testNamespace('local');
  const backends: LocalBackend[] = [];
  const strays: number[] = [];
  const make = (options: Partial<LocalBackendOptions> = {}) => {
    const b = new LocalBackend({ baseDir, namespace, stopGraceMs: 2_000, ...options });
    backends.push(b);
    return b;
  };
  afterAll(() => {
    for (const b of backends) b.close();
    killStrays(strays);
    rmSync(baseDir, { recursive: true, force: true });
  });
  const fx: LocalFixture = {
    backend: make(),
    baseDir,
    make,
    strays,
    image: 'host',
    restarted: () => make(),
    inNamespace: (ns) => make({ namespace: ns }),
    settle: (p) => p,
    eventually: (check, ms) => until(check, ms),
    // The host has the same POSIX tools as the runner image.
    commands: busyboxCommands,
  };
  if (canChoosePids()) {
    // A real pid reuse: the run is killed, and another process gets its pid.
    fx.replaceContainer = async (ref: RunRef) => {
      const pid = parseLocalHandle(ref.handle)?.pid;
      if (pid === undefined) throw new Error(`not a local handle: ${ref.handle}`);
      process.kill(-pid, 'SIGKILL');
      // The whole group: the kernel keeps a pid while it names a live group.
      await until(() => (isAlive(-pid) ? undefined : true), 5_000);
      // On a busy machine another process may fork first and take the freed
      // pid (CI lost all 200 tries once): a reuse by the kernel all the same,
      // and that process started later too.
      if ((await spawnWithPid(pid, strays)) === null && !isAlive(pid))
        throw new Error(`could not reuse pid ${pid}`);
    };
  }
  return fx;
}

/**
 * Kills the processes a test started outside any backend (`strays`) that
 * are still this process's children. A stray a test killed itself was
 * reaped, and its pid may belong to anything by the teardown (a Postgres
 * backend, say): the parent is what says it is still ours.
 */
export function killStrays(strays: readonly number[]): void {
  for (const pid of strays) {
    let parent: number | null = null;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    } catch {
      continue; // gone
    }
    if (parent === process.pid) process.kill(pid, 'SIGKILL');
  }
}

/**
 * Kills a run's process group, named by its handle, only while the group is
 * still the run's, by the backend's own rule (LocalBackend.remove): its
 * leader is the run's process (same start time, same boot), or gone with
 * members left (a pid stays allocated while it names a live group). A bare
 * `kill(-pid)` after the run ended hits whatever took the pid since: this
 * teardown once SIGKILLed a Postgres backend that had (backends lead their
 * own groups), and the shared server went through crash recovery under
 * every other test. Whether it signalled the group.
 */
export function killRunGroup(handle: string): boolean {
  const h = parseLocalHandle(handle);
  if (h === null) return false;
  const processes = hostProcessTable();
  if (h.bootToken !== processes.bootToken) return false;
  const leader = processes.identityOf(h.pid);
  const ours = leader === null || leader.zombie ? isAlive(-h.pid) : sameProcess(h, processes);
  if (!ours) return false;
  try {
    process.kill(-h.pid, 'SIGKILL');
    return true;
  } catch {
    return false; // gone meanwhile
  }
}

/**
 * Kills the process group of every run still going under a node's data
 * directory (a re-queued attempt, a failed test), found by its record: the
 * teardown of the end-to-end suites, whose runs outlive the nodes by design.
 */
export function killRunsUnder(dataDir: string, namespace = 'default'): void {
  const runs = join(dataDir, 'runs', namespace);
  for (const session of existsSync(runs) ? readdirSync(runs) : []) {
    const record = join(runs, session, 'run.json');
    if (!existsSync(record)) continue;
    const text = JSON.parse(readFileSync(record, 'utf8')) as { handle: string };
    killRunGroup(text.handle);
  }
}
