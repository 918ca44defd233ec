/**
 * What the runtime-on-Swarm suite needs around a real engine: one migrated
 * PGlite per file, runtimes booted on it with the real clock, the full
 * output of each finished TaskRunner (seen through inspection, since no row
 * holds output), real-time waits with deadlines, and the Swarm faults.
 */
import type Docker from 'dockerode';
import { type InspectionEvent, isMachineSnapshot } from 'xstate';
import { createRuntime } from '../../src/actors/runtime.js';
import type { Runtime, RuntimeOptions } from '../../src/actors/runtimeTypes.js';
import { SwarmBackend } from '../../src/containers/docker/SwarmBackend.js';
import { namespaceFilter } from '../../src/containers/namespace.js';
import { connect, type DbHandle } from '../../src/db/connect.js';
import { type Db, listSessionsForTask, migrate, type Session } from '../../src/db/index.js';
import { systemClock } from '../../src/supervisor/clock.js';
import { testNamespace } from '../containers/testNamespace.js';
import { truncateAll } from '../support/databases.js';

/**
 * This file's runs on the shared engine. The container suites run in other
 * vitest workers at the same time; without it, each Reconciler's stale-handle
 * sweep (and each suite's cleanup) removed the others' services.
 */
export const NAMESPACE = testNamespace('runtime');

/** A Swarm backend in this file's namespace. */
export const swarmBackend = (): SwarmBackend => new SwarmBackend({ namespace: NAMESPACE });

/** Fast enough for a real engine, slow enough not to flood a shared 2-core machine. */
export const POLL_MS = 300;

export async function openStore(): Promise<DbHandle> {
  const handle = await connect({ dataDir: 'memory://' });
  await migrate(handle.db);
  return handle;
}

export { truncateAll };

/** A booted runtime and what the test reads off it. */
export interface SwarmNode {
  runtime: Runtime;
  /** Errors the runtime reported (a test asserts none). */
  errors: unknown[];
  /** Full output of every TaskRunner that ended with an exit, by session id. */
  outputs: Map<string, { exitCode: number; output: string }>;
  /** A deploy: every actor dies at once, the services keep running. */
  kill(): void;
  /** Graceful stop, unless killed already (a killed tree has nothing to stop). */
  stop(): Promise<void>;
}

let boots = 0;

export async function bootNode(
  db: Db,
  options: {
    adoptBudgetMs?: number;
    pollMs?: number;
    /**
     * A second live node's own settings. The defaults suit one node booted
     * after another: the same `nodeId`, so each boot replaces the last (a deploy).
     */
    node?: Pick<
      RuntimeOptions,
      'nodeId' | 'localMax' | 'reconcileMs' | 'ioTimeoutMs' | 'storeDeadlineMs'
    >;
  } = {},
): Promise<SwarmNode> {
  boots += 1;
  const errors: unknown[] = [];
  const outputs = new Map<string, { exitCode: number; output: string }>();
  const inspect = (event: InspectionEvent) => {
    if (event.type !== '@xstate.snapshot' || !isMachineSnapshot(event.snapshot)) return;
    const snap = event.snapshot;
    if (snap.status !== 'done' || snap.machine.id !== 'taskRunner') return;
    const outcome = (snap.output as { outcome?: unknown } | undefined)?.outcome as
      | { outcome: string; exitCode?: number; output?: string }
      | null
      | undefined;
    const sessionId = (snap.context as { sessionId?: unknown }).sessionId;
    if (outcome?.outcome === 'exited' && typeof sessionId === 'string') {
      outputs.set(sessionId, { exitCode: outcome.exitCode ?? -1, output: outcome.output ?? '' });
    }
  };
  const runtime = await createRuntime({
    db,
    backend: swarmBackend(),
    clock: systemClock,
    caps: { maxRunning: 4, defaultUserCap: 4 },
    pollMs: options.pollMs ?? POLL_MS,
    adoptBudgetMs: options.adoptBudgetMs ?? 60_000,
    // The boot pass is what adopts; a second timed pass would only add noise.
    reconcileMs: 10 * 60_000,
    ioTimeoutMs: 20_000,
    nodeId: 'swarm-test',
    bootId: `boot${boots}`,
    inspect,
    onError: (error) => errors.push(error),
    ...options.node,
  });
  let killed = false;
  return {
    runtime,
    errors,
    outputs,
    kill() {
      killed = true;
      runtime.kill();
    },
    stop: () => (killed ? Promise.resolve() : runtime.stop()),
  };
}

/** Polls real time until `check` returns a value; the deadline bounds every wait. */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  deadlineMs = 15_000,
): Promise<T> {
  const until = Date.now() + deadlineMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== null && value !== false) return value;
    if (Date.now() >= until) throw new Error(`${what}: not within ${deadlineMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The task's sessions, by attempt. */
export const sessionsOf = (db: Db, taskId: string): Promise<Session[]> =>
  listSessionsForTask(db, taskId);

/** The latest attempt once `accept` holds for it. */
export function waitForSession(
  db: Db,
  taskId: string,
  what: string,
  accept: (s: Session) => boolean,
  deadlineMs?: number,
): Promise<Session> {
  return waitFor(
    what,
    async () => {
      const last = (await sessionsOf(db, taskId)).at(-1);
      return last !== undefined && accept(last) ? last : undefined;
    },
    deadlineMs,
  );
}

/** The running task (container) of a service, if any. */
export async function runningContainer(
  docker: Docker,
  handle: string,
): Promise<{ id: string; startedAt: Date } | undefined> {
  const tasks = await docker.listTasks({
    filters: { service: [handle], 'desired-state': ['running'] },
  });
  const id = tasks.find((t) => t.Status?.State === 'running')?.Status?.ContainerStatus?.ContainerID;
  if (!id) return undefined;
  const info = await docker.getContainer(id).inspect();
  return info.State.Running ? { id, startedAt: new Date(info.State.StartedAt) } : undefined;
}

/**
 * What a node's OOM killer or a crash does (as the Swarm contract's
 * `replaceContainer` does): the task's container dies and Swarm starts a new
 * one. Resolves with the new container once it runs.
 */
export async function killTaskContainer(
  docker: Docker,
  handle: string,
): Promise<{ killed: string; replacement: { id: string; startedAt: Date } }> {
  const current = await runningContainer(docker, handle);
  if (!current) throw new Error(`${handle} has no running task`);
  await docker.getContainer(current.id).kill();
  const replacement = await waitFor(
    `a new container for ${handle}`,
    async () => {
      const next = await runningContainer(docker, handle);
      return next && next.id !== current.id ? next : undefined;
    },
    20_000,
  );
  return { killed: current.id, replacement };
}

/** Removes every service of `namespace` (this file's by default), by its namespace label. */
export async function sweepServices(docker: Docker, namespace = NAMESPACE): Promise<void> {
  const services = await docker.listServices({ filters: { label: namespaceFilter(namespace) } });
  await Promise.all(
    services.map((s) =>
      docker
        .getService(s.ID)
        .remove()
        .catch((error: unknown) => {
          // Gone already (its runner removed it meanwhile) is what a sweep wants.
          if ((error as { statusCode?: number }).statusCode !== 404) throw error;
        }),
    ),
  );
}
