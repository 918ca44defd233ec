/**
 * A run that exited (its marker read: the exit code is known) whose output
 * could not be read back: its service removed right after the exit (`docker
 * service rm`, a cleanup script: Swarm's readOutput says "no such service"),
 * or the engine not answering at that moment. On a real Swarm an operator
 * saw such a run, which had printed all its lines and exited 0, failed as
 * `start_failed: inspect service rt-…: not found` and run a second time:
 * the read's failure went through the *start*-failure policy. An engine
 * that could not answer at that moment is asked again (outputReadPolicy.ts):
 * the output is still in the container.
 */
import { afterEach, expect, test, vi } from 'vitest';
import { ContainerError } from '../../src/containers/ContainerError.js';
import { SimulatedBackend } from '../../src/containers/simulated/SimulatedBackend.js';
import type { TestRuntime } from '../../src/testing/createTestRuntime.js';
import { pgliteRuntimes } from '../support/pgliteRuntimes.js';

const runtimes = pgliteRuntimes();

afterEach(() => {
  vi.restoreAllMocks();
});

const spec = { title: 't', image: 'runner:v1', command: ['agent', '5', '3'] };

/** The stored output of `sessionId`, as alice sees it. */
async function storedText(h: TestRuntime, sessionId: string): Promise<string | undefined> {
  return (await h.runtime.sessionOutput('alice', sessionId))?.text;
}

/** bob's task, granted at once and finished: the engine was never taken for down. */
async function nextTaskRuns(h: TestRuntime): Promise<void> {
  const next = await h.runtime.createTask('bob', {
    title: 'u',
    image: 'runner:v1',
    command: ['echo', 'hi'],
  });
  await h.advance(2_000);
  const done = (await h.sessions()).find((s) => s.id === next.sessionId);
  expect(done).toMatchObject({ status: 'succeeded', exitCode: 0 });
}

test('a run that exited whose output is gone (not_found): finished once by its exit code at once, never started again', async () => {
  const h = await runtimes.open({ pollMs: 1_000 });
  const read = vi
    .spyOn(SimulatedBackend.prototype, 'readOutput')
    .mockRejectedValue(new ContainerError('not_found', 'inspect service rt-x: not found'));
  const { taskId, sessionId } = await h.runtime.createTask('alice', spec);
  await h.advance(10_000);
  expect(read).toHaveBeenCalledTimes(1);
  const sessions = (await h.sessions()).filter((s) => s.taskId === taskId);
  // One attempt: the command ran once, and its exit code is the answer.
  expect(sessions).toHaveLength(1);
  expect(h.execLog(sessionId)).toHaveLength(1);
  expect(sessions[0]).toMatchObject({ status: 'failed', exitCode: 3 });
  expect(sessions[0]?.failureReason ?? '').not.toMatch(/start_failed|engine_unavailable/);
  expect(await storedText(h, sessionId)).toMatch(/could not be read back \(not_found/);
  read.mockRestore();
  await nextTaskRuns(h);
});

test('an engine outage at the read: read again every pollMs, and the whole output is stored once it answers', async () => {
  const h = await runtimes.open({ pollMs: 1_000 });
  const read = vi
    .spyOn(SimulatedBackend.prototype, 'readOutput')
    .mockRejectedValue(new ContainerError('unavailable', 'connect ECONNREFUSED'));
  const { taskId, sessionId } = await h.runtime.createTask('alice', spec);
  await h.advance(10_000);
  // Still running: its runner slot is held while the output waits in the container.
  expect((await h.sessions()).find((s) => s.id === sessionId)).toMatchObject({
    status: 'running',
  });
  const failedReads = read.mock.calls.length;
  expect(failedReads).toBeGreaterThanOrEqual(4);
  read.mockRestore();
  await h.advance(2_000);
  const sessions = (await h.sessions()).filter((s) => s.taskId === taskId);
  expect(sessions).toHaveLength(1);
  expect(h.execLog(sessionId)).toHaveLength(1);
  expect(sessions[0]).toMatchObject({ status: 'failed', exitCode: 3 });
  const text = await storedText(h, sessionId);
  expect(text).not.toMatch(/could not be read back/);
  expect(text).toMatch(/\S/);
  await nextTaskRuns(h);
});

test('an engine outage longer than the adopt budget: finished once by its exit code, saying why there is no output', async () => {
  const h = await runtimes.open({ pollMs: 1_000, adoptBudgetMs: 20_000 });
  const read = vi
    .spyOn(SimulatedBackend.prototype, 'readOutput')
    .mockRejectedValue(new ContainerError('unavailable', 'connect ECONNREFUSED'));
  const { taskId, sessionId } = await h.runtime.createTask('alice', spec);
  await h.advance(15_000);
  expect((await h.sessions()).find((s) => s.id === sessionId)?.status).toBe('running');
  await h.advance(15_000);
  const sessions = (await h.sessions()).filter((s) => s.taskId === taskId);
  expect(sessions).toHaveLength(1);
  expect(h.execLog(sessionId)).toHaveLength(1);
  expect(sessions[0]).toMatchObject({ status: 'failed', exitCode: 3 });
  expect(sessions[0]?.failureReason ?? '').not.toMatch(/start_failed|engine_unavailable/);
  expect(await storedText(h, sessionId)).toMatch(/could not be read back \(unavailable/);
  read.mockRestore();
  await nextTaskRuns(h);
});
