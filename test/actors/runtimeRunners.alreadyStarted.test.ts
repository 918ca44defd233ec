import { describe, expect, it } from 'vitest';
import { RunnerStarter } from '../../src/actors/runtimeRunners.js';
import type { taskRunnerLogic } from '../../src/actors/taskRunner.js';
import { AlreadyStartedError, NotFoundError } from '../../src/supervisor/errors.js';
import type { Supervisor } from '../../src/supervisor/Supervisor.js';

/** A runners supervisor whose start of a child fails with `error`. */
function starterFailingWith(error: Error): RunnerStarter {
  const runners = {
    childStatus: () => undefined,
    startChild: () => Promise.reject(error),
  } as unknown as Supervisor;
  return new RunnerStarter({
    runners: () => runners,
    logic: {} as ReturnType<typeof taskRunnerLogic>,
    input: { pollMs: 1, adoptBudgetMs: 1, ioTimeoutMs: 1 },
    isDead: () => false,
  });
}

const session = { id: 'ses_1', userId: 'ann' } as Parameters<RunnerStarter['adoptFenced']>[0];

describe('RunnerStarter, two starters racing for one session', () => {
  it('takes the supervisor saying the runner started already as the race lost, not a failure', async () => {
    await expect(
      starterFailingWith(new AlreadyStartedError('ses_1')).adoptFenced(session, null),
    ).resolves.toBeUndefined();
  });

  it('still fails on any other start error, including one only named like it', async () => {
    await expect(
      starterFailingWith(new NotFoundError('ses_1')).adoptFenced(session, null),
    ).rejects.toThrow(NotFoundError);
    const lookalike = Object.assign(new Error('already started: ses_1'), {
      code: 'ALREADY_STARTED',
    });
    await expect(starterFailingWith(lookalike).adoptFenced(session, null)).rejects.toBe(lookalike);
  });
});
