/**
 * A run that exited (its marker read: the exit code is known) whose output
 * could not be read back: its service removed right after the exit (`docker
 * service rm`, a cleanup script: Swarm's readOutput says "no such service"),
 * or the engine not answering at that moment. On a real Swarm an operator
 * saw such a run, which had printed all its lines and exited 0, failed as
 * `start_failed: inspect service rt-…: not found` and run a second time:
 * the read's failure went through the *start*-failure policy.
 */
import { afterEach, expect, test, vi } from 'vitest';
import { ContainerError } from '../../src/containers/ContainerError.js';
import { SimulatedBackend } from '../../src/containers/simulated/SimulatedBackend.js';
import { pgliteRuntimes } from '../support/pgliteRuntimes.js';

const runtimes = pgliteRuntimes();

afterEach(() => {
  vi.restoreAllMocks();
});

for (const code of ['not_found', 'unavailable'] as const) {
  test(`a run that exited whose output read failed (${code}): finished once by its exit code, never started again`, async () => {
    const h = await runtimes.open({ pollMs: 1_000 });
    const read = vi
      .spyOn(SimulatedBackend.prototype, 'readOutput')
      .mockRejectedValue(new ContainerError(code, 'inspect service rt-x: not found'));
    const { taskId, sessionId } = await h.runtime.createTask('alice', {
      title: 't',
      image: 'runner:v1',
      command: ['agent', '5', '3'],
    });
    await h.advance(10_000);
    expect(read).toHaveBeenCalled();
    const sessions = (await h.sessions()).filter((s) => s.taskId === taskId);
    // One attempt: the command ran once, and its exit code is the answer.
    expect(sessions).toHaveLength(1);
    expect(h.execLog(sessionId)).toHaveLength(1);
    expect(sessions[0]).toMatchObject({ status: 'failed', exitCode: 3 });
    expect(sessions[0]?.failureReason ?? '').not.toMatch(/start_failed|engine_unavailable/);
    // The engine was not taken for down: the next task is granted at once.
    read.mockRestore();
    const next = await h.runtime.createTask('bob', {
      title: 'u',
      image: 'runner:v1',
      command: ['echo', 'hi'],
    });
    await h.advance(2_000);
    const done = (await h.sessions()).find((s) => s.id === next.sessionId);
    expect(done).toMatchObject({ status: 'succeeded', exitCode: 0 });
  });
}
