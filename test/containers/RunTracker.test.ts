import { describe, expect, it } from 'vitest';
import { SimulatedClock } from 'xstate';
import { ContainerError } from '../../src/containers/ContainerError.js';
import { RunTracker } from '../../src/containers/RunTracker.js';

describe('RunTracker', () => {
  it('replays output that came before attach, then streams the rest', async () => {
    const clock = new SimulatedClock();
    const tracker = new RunTracker('rt-s1');
    tracker.push('a');
    const chunks: string[] = [];
    const done = tracker.attach({ onOutput: (c) => chunks.push(c) }, clock, 1000);
    tracker.push('b');
    tracker.exit({ exitCode: 2 });
    tracker.push('ignored after exit');
    await expect(done).resolves.toEqual({ exitCode: 2 });
    expect(chunks).toEqual(['a', 'b']);
  });

  it('marks the cut when the replay buffer overflows', async () => {
    const clock = new SimulatedClock();
    const tracker = new RunTracker('rt-s1', 4);
    for (const c of ['aa', 'bb', 'cc']) tracker.push(c);
    tracker.exit({ exitCode: 0 });
    const chunks: string[] = [];
    await tracker.attach({ onOutput: (c) => chunks.push(c) }, clock, 1000);
    expect(chunks).toEqual(['[roundtable: live output cut, first 2 bytes dropped]\n', 'bb', 'cc']);
  });

  it('passes a failure through and stops streaming to a timed-out attacher', async () => {
    const clock = new SimulatedClock();
    const tracker = new RunTracker('rt-s1');
    const chunks: string[] = [];
    const waiting = tracker.attach({ onOutput: (c) => chunks.push(c) }, clock, 100);
    clock.increment(100);
    await expect(waiting).rejects.toMatchObject({ code: 'timeout' });
    tracker.push('late');
    expect(chunks).toEqual([]);
    const second = tracker.attach({}, clock, 100);
    tracker.fail(new ContainerError('exec_lost', 'gone'));
    await expect(second).rejects.toMatchObject({ code: 'exec_lost' });
  });
});
