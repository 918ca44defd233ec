/**
 * After a deploy the new boot adopts the running session (its container
 * kept running) and its board card goes on showing the run's new lines as
 * they are printed, not only once the run ends: the adopter follows the
 * output file through the backend (here the simulated cluster's).
 */
import { expect, test } from 'vitest';
import { createTestRuntime } from '../../src/testing/index.js';

test("an adopted run's card shows the lines printed after the deploy before the run ends", async () => {
  const h = await createTestRuntime({ dispatchPollMs: 3_600_000 });
  try {
    // 100 s, a step printed every 10 s.
    const { task } = await h.runtime.submit('alice', {
      title: 't',
      image: 'runner:v1',
      command: ['agent', '100'],
    });
    await h.advance(15_000);
    const card = () => h.board().find((c) => c.taskId === task.id);
    expect(card()?.lastOutput).toEqual([
      '[agent] reading the task description...',
      '[agent] cloning the repository...',
    ]);
    const before = (await h.sessions()).find((s) => s.taskId === task.id);

    await h.deploy();
    await h.advance(40_000); // steps 3 to 6 printed after the deploy, at 20-50 s
    const after = (await h.sessions()).find((s) => s.taskId === task.id);
    expect(after?.status).toBe('running');
    expect(after?.owner).not.toBe(before?.owner);
    expect(card()?.column).toBe('running');
    expect(card()?.lastOutput).toContain('[agent] writing a failing test...');

    await h.advance(60_000);
    expect(card()?.column).toBe('done');
    expect(card()?.lastOutput.at(-1)).toBe('[agent] done');
    expect(h.execLog(after?.id ?? '')).toHaveLength(1);
    expect(h.errors).toEqual([]);
  } finally {
    await h.close();
  }
});
