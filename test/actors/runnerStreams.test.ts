/**
 * `followRun` and `settleFollow` (src/actors/runnerStreams.ts) over a fake
 * backend, on virtual time: a stopped follow's late chunks (its read to the
 * end, after engine round trips) still reach the board until it says it
 * ended, and a finish waits for that at most `FOLLOW_END_WAIT_MS`.
 */

import { expect, it } from 'vitest';
import { SimulatedClock } from 'xstate';
import { FOLLOW_END_WAIT_MS, followRun, settleFollow } from '../../src/actors/runnerStreams.js';
import { newRun } from '../../src/actors/taskRunnerDeps.js';
import type { ContainerBackend, FollowOptions } from '../../src/containers/ContainerBackend.js';

const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

function followed() {
  let options: FollowOptions | undefined;
  const backend = {
    follow: (_ref: unknown, o: FollowOptions) => {
      options = o;
    },
  } as unknown as ContainerBackend;
  const run = newRun('s1');
  const told: unknown[] = [];
  const shown: string[] = [];
  const to = { send: (e: unknown) => told.push(e), getSnapshot: () => ({ status: 'active' }) };
  followRun(backend, run, to, { sessionId: 's1', handle: 'rt-s1' }, (_, chunk) =>
    shown.push(chunk),
  );
  if (options === undefined) throw new Error('follow was not called');
  return { run, options, told, shown };
}

it("a stopped follow's read to the end reaches the board, not the chart, and the finish waits for its end", async () => {
  const f = followed();
  f.options.onOutput('one\n');
  f.run.unfollow?.();
  expect(f.options.signal.aborted).toBe(true);
  f.options.onOutput('two\n'); // the read to the end, landing after the stop
  const clock = new SimulatedClock();
  let settled = false;
  const settling = settleFollow(f.run, clock).then(() => {
    settled = true;
  });
  await flush();
  expect(settled).toBe(false);
  f.options.onEnd?.();
  await settling;
  expect(f.shown).toEqual(['one\n', 'two\n']);
  expect(f.told).toHaveLength(1); // only the chunk before the stop went to the chart
  expect(f.run.followed).toBe(true);
  expect(f.run.followEnd).toBeNull();
});

it('a follow that never says it ended holds the finish FOLLOW_END_WAIT_MS, then is cut', async () => {
  const f = followed();
  f.run.unfollow?.();
  const clock = new SimulatedClock();
  let settled = false;
  const settling = settleFollow(f.run, clock).then(() => {
    settled = true;
  });
  clock.increment(FOLLOW_END_WAIT_MS - 1);
  await flush();
  expect(settled).toBe(false);
  clock.increment(1);
  await settling;
  f.options.onOutput('too late\n');
  expect(f.shown).toEqual([]);
});

it('a run that ends (its runner gone) stops the follow and shows nothing more', () => {
  const f = followed();
  f.run.abort.abort();
  expect(f.options.signal.aborted).toBe(true);
  f.options.onOutput('after\n');
  expect(f.shown).toEqual([]);
});
