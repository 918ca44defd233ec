/** Fixture pieces shared by the Swarm and plain Docker suites (real engine, real time). */
import type Docker from 'dockerode';
import type { RunRef } from '../../../src/containers/ContainerBackend.js';
import type { ContractFixture } from '../contract.js';

export const busyboxCommands: ContractFixture['commands'] = {
  print: (text, code) => [
    'sh',
    '-c',
    'printf "%s\\n" "$1"; exit "$2"',
    'print',
    text,
    String(code),
  ],
  bytes: (n) => ['head', '-c', String(n), '/dev/zero'],
  long: (text) => ['sh', '-c', 'echo "$1"; sleep 600', 'long', text],
};

/** Polls a real engine; the deadline bounds it. */
export async function eventuallyReal<T>(
  check: () => Promise<T | undefined>,
  deadlineMs: number,
): Promise<T> {
  const until = Date.now() + deadlineMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() >= until) throw new Error(`not within ${deadlineMs} ms`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/**
 * What a node's OOM killer or a crash does to a Swarm run: the task's
 * container dies and Swarm starts a new one for the service.
 */
export async function killSwarmTask(docker: Docker, ref: RunRef): Promise<void> {
  const tasks = await docker.listTasks({
    filters: { service: [ref.handle], 'desired-state': ['running'] },
  });
  const id = tasks.find((t) => t.Status?.State === 'running')?.Status?.ContainerStatus?.ContainerID;
  if (!id) throw new Error(`${ref.handle} has no running task`);
  await docker.getContainer(id).kill();
}
