/**
 * Pins of the TaskRunner actor's finalize step, found by the real-engine
 * suite (runtime.swarm.test.ts) and proven here on the simulated cluster.
 */
import { expect, test } from 'vitest';
import type { TestRuntime } from '../../src/testing/index.js';
import { pgliteRuntimes } from '../support/pgliteRuntimes.js';

const runtimes = pgliteRuntimes();
let h: TestRuntime;

const AGENT_LINES = 11; // ten steps and the closing line of the `agent` script

test('a non-zero exit fails the session as not user-recoverable and queues nothing', async () => {
  h = await runtimes.open();
  const { taskId } = await h.runtime.createTask('alice', {
    title: 'fails',
    image: 'runner:v1',
    command: ['fail', '3', 'bad'],
  });
  await h.advance(1_000);
  expect(await h.sessions()).toMatchObject([
    { status: 'failed', exitCode: 3, failureReason: 'exit_code', userRecoverable: false },
  ]);
  expect(h.board().find((c) => c.taskId === taskId)).toMatchObject({
    column: 'failed',
    failure: { reason: 'exit_code', recoverable: false },
    lastOutput: ['bad'],
  });
  expect(h.errors).toEqual([]);
});

test('an adopted run’s card ends with its output, read whole from the container', async () => {
  h = await runtimes.open({ pollMs: 5_000 });
  const { taskId } = await h.runtime.createTask('alice', {
    title: 'adopted',
    image: 'runner:v1',
    command: ['agent', '120'],
  });
  await h.advance(30_000);
  await h.deploy();
  await h.advance(120_000);
  const card = h.board().find((c) => c.taskId === taskId);
  expect(card).toMatchObject({ column: 'done', status: 'succeeded' });
  expect(card?.lastOutput).toHaveLength(AGENT_LINES);
  expect(card?.lastOutput.at(-1)).toBe('[agent] done');
  expect(h.errors).toEqual([]);
});

test('a run streamed live is not repeated on its card when it finishes', async () => {
  h = await runtimes.open();
  const { taskId } = await h.runtime.createTask('alice', {
    title: 'owned',
    image: 'runner:v1',
    command: ['agent', '30'],
  });
  await h.advance(31_000);
  const card = h.board().find((c) => c.taskId === taskId);
  expect(card?.column).toBe('done');
  expect(card?.lastOutput).toHaveLength(AGENT_LINES);
  expect(new Set(card?.lastOutput).size).toBe(AGENT_LINES);
});
