/**
 * A run's service removed behind the runtime's back (`docker service rm` by
 * an operator, a cleanup script) while its live holder runs it: the exec
 * breaks, the runner falls back to polling for the marker, and the engine
 * says "no such service". Nothing can ever come back from there, so the run
 * gives up at once (`container_gone`) and its next attempt is queued at the
 * head of its user's line. Before, the observation's `absent` was dropped
 * (src/actors/runnerContainerRun.ts) and only the adoption budget
 * (`adoptBudgetMs`, 15 min by default) ended it: the card said running and
 * the slot was held all that time.
 */
import { expect, test } from 'vitest';
import { pgliteRuntimes } from '../support/pgliteRuntimes.js';

const runtimes = pgliteRuntimes();

test('a service removed under a live runner: given up at once as container_gone, re-queued', async () => {
  const h = await runtimes.open({ pollMs: 1_000 });
  const { taskId, sessionId } = await h.runtime.createTask('alice', {
    title: 't',
    image: 'runner:v1',
    command: ['agent', '600'],
  });
  await h.advance(2_000);
  expect((await h.sessions()).find((s) => s.id === sessionId)?.status).toBe('running');
  await h.cluster.api.removeService(`rt-${sessionId}`);
  // A few polls, far less than the 15 min adoption budget.
  await h.advance(10_000);
  const events = await h.events(sessionId);
  expect(events.at(-1)).toMatchObject({ to: 'failed', reason: 'container_gone' });
  const next = (await h.sessions()).filter((s) => s.taskId === taskId && s.attempt === 2);
  expect(next).toHaveLength(1);
});
