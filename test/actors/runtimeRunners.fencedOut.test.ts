/**
 * A fenced row replaces a runner of the same session that began before the
 * fence (it works at an older epoch: this boot lost its lock, another node
 * adopted the run and died, the run comes back here). A grant never does:
 * a live runner of a granted session is the one that runs it.
 */
import { describe, expect, it } from 'vitest';
import { RunnerStarter } from '../../src/actors/runtimeRunners.js';
import type { taskRunnerLogic } from '../../src/actors/taskRunner.js';
import type { Session, Task } from '../../src/db/rows.js';
import { NotFoundError } from '../../src/supervisor/errors.js';
import type { Supervisor } from '../../src/supervisor/Supervisor.js';

type Status = 'running' | 'restarting' | 'stopped' | undefined;

/** A runners supervisor with one child of `status`, saying what was asked of it. */
function world(status: Status, terminate: () => Promise<void> = async () => {}) {
  const calls: string[] = [];
  const runners = {
    childStatus: () => status,
    terminateChild: async (id: string) => {
      calls.push(`terminate ${id}`);
      await terminate();
    },
    startChild: async (spec: { id: string; start: { input: { start: string } } }) => {
      calls.push(`start ${spec.id} ${spec.start.input.start}`);
    },
  } as unknown as Supervisor;
  return { calls, starter: starterOn(runners) };
}

function starterOn(runners: Supervisor): RunnerStarter {
  return new RunnerStarter({
    runners: () => runners,
    logic: {} as ReturnType<typeof taskRunnerLogic>,
    input: { pollMs: 1, adoptBudgetMs: 1, ioTimeoutMs: 1 },
    isDead: () => false,
  });
}

const session = { id: 'ses_1', userId: 'ann', epoch: 4 } as Session;
const grant = { session, task: {} as Task };

describe('RunnerStarter, a runner the fence moved out', () => {
  it('replaces a live runner of the session with one that goes on from the fenced row', async () => {
    for (const status of ['running', 'restarting'] as const) {
      const w = world(status);
      await w.starter.adoptFenced(session, null);
      expect(w.calls).toEqual(['terminate ses_1', 'start ses_1 adopt']);
    }
  });

  it('starts one when there is none, and takes a child gone meanwhile as nothing to stop', async () => {
    const none = world(undefined);
    await none.starter.adoptFenced(session, null);
    expect(none.calls).toEqual(['start ses_1 adopt']);
    const gone = world('running', () => Promise.reject(new NotFoundError('ses_1')));
    await gone.starter.adoptFenced(session, null);
    expect(gone.calls).toEqual(['terminate ses_1', 'start ses_1 adopt']);
    const broken = world('running', () => Promise.reject(new Error('mailbox closed')));
    await expect(broken.starter.adoptFenced(session, null)).rejects.toThrow('mailbox closed');
    expect(broken.calls).toEqual(['terminate ses_1']);
  });

  it('leaves a live runner of a granted session alone', async () => {
    const w = world('running');
    await w.starter.granted(grant);
    expect(w.calls).toEqual([]);
    const stopped = world('stopped');
    await stopped.starter.granted(grant);
    expect(stopped.calls).toEqual(['terminate ses_1', 'start ses_1 granted']);
  });

  it('stops a fenced-out runner only while this boot knows no epoch as new as the row', async () => {
    const w = world('running');
    // A grant at epoch 4, the row at 5 since (another node adopted it): stopped.
    await w.starter.granted(grant);
    expect(w.starter.startEpoch('ses_1')).toBeUndefined(); // a live runner's grant is not this runner's
    expect(await w.starter.stopFencedOut('ses_1', 5, () => 4)).toBe(4);
    expect(w.calls).toEqual(['terminate ses_1']);
    // This boot holds it at 5 itself (its own adoption): left alone.
    expect(await w.starter.stopFencedOut('ses_1', 5, () => 5)).toBeUndefined();
    // Nothing known of its epoch (a runner on its own adopt path, before its CAS): left alone.
    expect(await w.starter.stopFencedOut('ses_1', 5, () => undefined)).toBeUndefined();
    expect(w.calls).toEqual(['terminate ses_1']);
  });

  it('leaves alone a runner whose session is being fenced back to this boot, and one that ended', async () => {
    let release: () => void = () => {};
    const w = world('running', () => new Promise<void>((r) => (release = r)));
    const adopting = w.starter.adoptFenced({ ...session, epoch: 6 }, null);
    expect(w.starter.startEpoch('ses_1')).toBe(6);
    expect(await w.starter.stopFencedOut('ses_1', 9, () => 4)).toBeUndefined();
    release();
    await adopting;
    expect(w.calls).toEqual(['terminate ses_1', 'start ses_1 adopt']);
    const ended = world('stopped');
    expect(await ended.starter.stopFencedOut('ses_1', 5, () => 4)).toBeUndefined();
    expect(ended.calls).toEqual([]);
  });

  it('forgets the start epochs of sessions whose runners ended', async () => {
    let status: Status;
    const calls: string[] = [];
    const runners = {
      childStatus: () => status,
      terminateChild: async () => {},
      startChild: async (spec: { id: string }) => {
        calls.push(spec.id);
        status = 'running';
      },
    } as unknown as Supervisor;
    const starter = starterOn(runners);
    await starter.granted(grant);
    expect(starter.startEpoch('ses_1')).toBe(4);
    starter.forgetEnded();
    expect(starter.startEpoch('ses_1')).toBe(4);
    status = 'stopped';
    starter.forgetEnded();
    expect(starter.startEpoch('ses_1')).toBeUndefined();
  });
});
