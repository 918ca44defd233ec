/**
 * A runtime whose `onError` itself throws: the throw is the app's bug, so
 * it surfaces as uncaught on a microtask (as the supervisor's does), never
 * inside the runner, tick or listener guard that was reporting, which go
 * on: here a subscriber throws on every card, its report throws in turn,
 * and the job still runs to the end.
 */
import { expect, test } from 'vitest';
import { expectNoUncaught } from '../supervisor/noUncaught.js';
import { pgliteRuntimes } from '../support/pgliteRuntimes.js';

const runtimes = pgliteRuntimes();
const uncaught = expectNoUncaught();

test('an onError that throws surfaces as uncaught, and the job that reported goes on', async () => {
  const h = await runtimes.open({
    onError: () => {
      throw new Error('reporter down');
    },
  });
  await h.runtime.booted;
  h.runtime.subscribe(() => {
    throw new Error('subscriber bug');
  });
  const { task } = await h.runtime.submit('alice', {
    title: 't',
    image: 'runner:v1',
    command: ['agent', '2'],
  });
  await h.advance(5_000);
  expect(h.runtime.cards('alice').find((c) => c.taskId === task.id)?.status).toBe('succeeded');
  await new Promise((r) => setImmediate(r));
  expect(uncaught.length).toBeGreaterThan(0);
  expect(new Set(uncaught.map((e) => (e as Error).message))).toEqual(new Set(['reporter down']));
  uncaught.length = 0;
});
