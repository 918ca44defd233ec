import { expect, test } from 'vitest';
import * as inFlight from '../../src/actors/runtimeInFlight.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/actors/runtimeInFlight.ts', import.meta.url), inFlight);

test('a failed call is counted until it fails, and its error reaches the caller', async () => {
  const f = new inFlight.InFlight();
  const { track } = f; // handed around unbound, as the runtime does
  let fail: (e: Error) => void = () => {};
  const work = track(
    new Promise((_, reject) => {
      fail = reject;
    }),
  );
  const other = track(Promise.resolve('ok'));
  expect(f.count()).toBe(2);
  await expect(other).resolves.toBe('ok');
  expect(f.count()).toBe(1);
  fail(new Error('boom'));
  await expect(work).rejects.toThrow('boom');
  expect(f.count()).toBe(0);
});
