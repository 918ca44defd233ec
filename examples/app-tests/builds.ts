/**
 * The application's own code under test: it queues a build for a user and
 * tells its users where their build is. It takes the runtime as a parameter,
 * so its tests hand it the simulated one (builds.test.ts).
 */
import type { Runtime, RuntimeCard } from 'roundtable';

/** Queues a build of `repo` for `userId`; resolves with the task id. */
export async function queueBuild(runtime: Runtime, userId: string, repo: string): Promise<string> {
  const { taskId } = await runtime.createTask(userId, {
    title: `build ${repo}`,
    image: 'builder:v1',
    // The simulated cluster's `agent <seconds>`: works for that long, then exits 0.
    command: ['agent', '600'],
  });
  return taskId;
}

/** What the app shows a user about one build. */
export function buildStatus(card: RuntimeCard | undefined): string {
  if (card === undefined) return 'unknown build';
  if (card.column === 'queued') return `waiting, ${card.queued?.position ?? '?'} in line`;
  if (card.column === 'running')
    return card.attempt > 1 ? `running again (attempt ${card.attempt})` : 'running';
  if (card.column === 'done') return 'built';
  return `failed: ${card.failure?.reason ?? 'unknown'}`;
}
