/**
 * An observation that says the run's service or container is gone for good
 * (`gone`, the backend's `presence: 'absent'`) ends the adoption at once as
 * `container_gone`, not at the end of the budget; a marker read in the same
 * look still wins (the run completed there).
 */
import { expect, test } from 'vitest';
import { createActor, SimulatedClock } from 'xstate';
import { containerRunMachine, type Observation } from '../../src/machines/containerRun.js';

function adopt(observation: Observation) {
  const clock = new SimulatedClock();
  let looks = 0;
  const actor = createActor(
    containerRunMachine.provide({
      actions: {
        observe: ({ self }, { seq }) => {
          looks += 1;
          queueMicrotask(() =>
            self.send({ type: 'roundtable.run.observe.done', seq, output: observation }),
          );
        },
        readOutput: ({ self }) =>
          queueMicrotask(() => self.send({ type: 'roundtable.run.readOutput.done', output: 'x' })),
      },
    }),
    {
      clock,
      input: {
        sessionId: 's1',
        mode: 'adopt',
        handle: 'rt-s1',
        sessionStartedAt: '2026-07-14T10:44:00Z',
        pollMs: 1_000,
        budgetMs: 900_000,
      },
    },
  ).start();
  return { actor, clock, looks: () => looks };
}

test('a gone service gives up at the first look', async () => {
  const { actor, looks } = adopt({ containerStartedAt: null, marker: null, gone: true });
  await Promise.resolve();
  expect(actor.getSnapshot().output).toEqual({ outcome: 'gave_up', reason: 'container_gone' });
  expect(looks()).toBe(1);
});

test('a service with no container running now is still polled (Swarm may start one)', async () => {
  const { actor, clock } = adopt({ containerStartedAt: null, marker: null });
  await Promise.resolve();
  clock.increment(5_000);
  await Promise.resolve();
  expect(actor.getSnapshot().status).toBe('active');
});

test('the marker wins over gone', async () => {
  const { actor } = adopt({ containerStartedAt: null, marker: { exitCode: 0 }, gone: true });
  await Promise.resolve();
  await Promise.resolve();
  expect(actor.getSnapshot().output).toMatchObject({ outcome: 'exited', exitCode: 0 });
});
