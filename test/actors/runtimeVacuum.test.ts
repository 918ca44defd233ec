import { expect, test } from 'vitest';
import { VacuumSchedule } from '../../src/actors/runtimeVacuum.js';

function setup(every: number) {
  const done: Array<(error?: Error) => void> = [];
  const errors: unknown[] = [];
  let tracked = 0;
  const schedule = new VacuumSchedule({
    every,
    vacuum: () =>
      new Promise<void>((resolve, reject) => {
        done.push((error) => (error ? reject(error) : resolve()));
      }),
    track: (work) => {
      tracked += 1;
      return work;
    },
    onError: (e) => errors.push(e),
  });
  const tick = (n: number) => {
    for (let i = 0; i < n; i += 1) schedule.ticked();
  };
  return { done, errors, tick, tracked: () => tracked };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

test('one vacuum every `every` ticks, tracked', async () => {
  const s = setup(3);
  s.tick(2);
  expect(s.done).toHaveLength(0);
  s.tick(1);
  expect(s.done).toHaveLength(1);
  expect(s.tracked()).toBe(1);
  s.done[0]?.();
  await settle();
  s.tick(3);
  expect(s.done).toHaveLength(2);
});

test('never two at once: ticks during a vacuum count towards the next, which waits for it', async () => {
  const s = setup(2);
  s.tick(2);
  s.tick(5);
  expect(s.done).toHaveLength(1);
  s.done[0]?.();
  await settle();
  // The count went on during the vacuum: the next tick starts the next one.
  s.tick(1);
  expect(s.done).toHaveLength(2);
});

test('a failed vacuum is reported and the next one still runs', async () => {
  const s = setup(1);
  s.tick(1);
  s.done[0]?.(new Error('lock timeout'));
  await settle();
  expect(s.errors).toEqual([new Error('lock timeout')]);
  s.tick(1);
  expect(s.done).toHaveLength(2);
});
