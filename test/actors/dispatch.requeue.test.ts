/**
 * A run the infrastructure ended keeps its place: the new attempt goes to
 * the head of its user's line (not behind the user's newer work, not behind
 * everyone who arrived meanwhile), and its card says why the previous
 * attempt ended. A run the user's own command failed is not re-queued.
 */
import { afterEach, expect, test } from 'vitest';
import { createTestRuntime, type TestRuntime } from '../../src/testing/index.js';
import { describeEachEngine } from '../support/databases.js';

let h: TestRuntime | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const agent = (seconds: number) => ({
  title: `agent ${seconds}`,
  image: 'runner:v1',
  command: ['agent', String(seconds)],
});
const POLL = 5_000;

describeEachEngine('dispatch: re-queued after the infrastructure', (getDb) => {
  test('container_replaced: attempt 2 is first in its line and ahead of later arrivals; the card says why', async () => {
    h = await createTestRuntime({
      db: getDb().db,
      caps: { maxRunning: 1, defaultUserCap: 1 },
      pollMs: POLL,
    });
    const first = await h.runtime.createTask('ann', agent(600));
    for (let i = 0; i < 3; i++) await h.runtime.createTask('ann', agent(60));
    await h.advance(10_000);
    // Others arrive while ann's first run holds the only slot.
    await h.runtime.createTask('bob', agent(60));
    await h.runtime.createTask('cyd', agent(60));
    await h.deploy();
    h.cluster.reschedule(first.sessionId);
    await h.runtime.reconcile();
    await h.advance(POLL);
    const rows = await h.sessions();
    const again = rows.find((s) => s.taskId === first.taskId && s.attempt === 2);
    expect(again).toBeDefined();
    const card = h.board().find((c) => c.taskId === first.taskId);
    // Granted at once (position 0 = running) or first in line: never behind anyone.
    expect(card?.column === 'running' || card?.queued?.position === 1).toBe(true);
    expect(card?.previous).toEqual({ attempt: 1, reason: 'container_replaced' });
    const others = h.board().filter((c) => c.taskId !== first.taskId && c.queued !== null);
    for (const c of others) expect(c.queued?.position).toBeGreaterThan(card?.queued?.position ?? 0);
    expect(h.errors).toEqual([]);
  });
});
