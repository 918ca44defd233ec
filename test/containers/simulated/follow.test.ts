/**
 * `SimulatedBackend.follow` on virtual time: a backend that did not start a
 * run (an adopter over the same cluster) follows its output through the
 * cluster's API, through outages, until a stop or a reschedule.
 */

import { describe, expect, it } from 'vitest';
import { SimulatedClock } from 'xstate';
import type { FollowOptions, RunRef } from '../../../src/containers/ContainerBackend.js';
import type { SimCommandRegistry } from '../../../src/containers/simulated/commands.js';
import { SimulatedBackend } from '../../../src/containers/simulated/SimulatedBackend.js';
import { SimulatedCluster } from '../../../src/containers/simulated/SimulatedCluster.js';
import { outputPath } from '../../../src/containers/wrapper.js';
import { flush } from './simulatedFixture.js';

/** `count` lines `line <i>`, one a second from 0, then exits 0. */
const commands: SimCommandRegistry = {
  lines: (args) => {
    const count = Number(args[0] ?? '5');
    const prefix = args[1] ?? 'line';
    return {
      output: Array.from({ length: count }, (_, i) => ({
        atMs: i * 1000,
        text: `${prefix} ${i}\n`,
      })),
      durationMs: count * 1000,
      exitCode: 0,
    };
  },
};

function setup(followPollMs = 1000) {
  const clock = new SimulatedClock();
  clock.set(Date.parse('2026-07-14T10:00:00Z'));
  const cluster = new SimulatedCluster({ clock, commands, rescheduleDelayMs: 500 });
  const owner = new SimulatedBackend(cluster);
  const adopter = new SimulatedBackend(cluster, { followPollMs });
  const advance = async (ms: number) => {
    for (let t = 0; t < ms; t += 100) {
      clock.increment(100);
      await flush();
    }
  };
  const start = async (command: string[], sessionId: string): Promise<RunRef> => {
    const started = owner.start({ sessionId, image: 'runner:1', command });
    await flush();
    return { sessionId, handle: (await started).handle };
  };
  const follow = (ref: RunRef, options: Partial<FollowOptions> = {}) => {
    const chunks: string[] = [];
    const abort = new AbortController();
    adopter.follow(ref, { signal: abort.signal, onOutput: (c) => chunks.push(c), ...options });
    return { text: () => chunks.join(''), stop: () => abort.abort() };
  };
  return { clock, cluster, advance, start, follow };
}

const lines = (from: number, to: number, prefix = 'line') =>
  Array.from({ length: to - from }, (_, i) => `${prefix} ${from + i}\n`).join('');

describe('SimulatedBackend.follow', () => {
  it('an adopter sees the lines so far, then each new one before the run ends, and all by the stop', async () => {
    const s = setup();
    const ref = await s.start(['lines', '10'], 'f1');
    await s.advance(3500);
    const f = s.follow(ref);
    await s.advance(100);
    expect(f.text()).toBe(lines(0, 4));
    await s.advance(3000);
    expect(f.text()).toBe(lines(0, 7));
    await s.advance(4000); // the run ended at 10 s
    f.stop();
    await s.advance(100);
    expect(f.text()).toBe(lines(0, 10));
  });

  it('a stop between two polls reads to the end first', async () => {
    const s = setup(60_000); // one poll at the start, the next long after the stop
    const ref = await s.start(['lines', '4'], 'f2');
    const f = s.follow(ref);
    await s.advance(100);
    expect(f.text()).toBe(lines(0, 1));
    await s.advance(3500);
    f.stop();
    expect(f.text()).toBe(lines(0, 1));
    await flush();
    await flush();
    expect(f.text()).toBe(lines(0, 4));
  });

  it('from a byte: what was shown already (with a multi-byte character) is not shown again', async () => {
    const s = setup();
    const ref = await s.start(['lines', '3', 'hé'], 'f3');
    await s.advance(2500);
    const f = s.follow(ref, { fromByte: Buffer.byteLength('hé 0\n') });
    await s.advance(1000);
    expect(f.text()).toBe('hé 1\nhé 2\n');
  });

  it('without a byte: the tail from its first whole line', async () => {
    const s = setup();
    const ref = await s.start(['lines', '5'], 'f4');
    await s.advance(4500);
    const f = s.follow(ref, { tailBytes: 10 }); // "line 3\nline 4\n": the cut falls inside "line 3"
    await s.advance(100);
    expect(f.text()).toBe('line 4\n');
  });

  it('waits for a file not there yet', async () => {
    const s = setup();
    const started = s.cluster.api.createService({
      name: 'rt-f5',
      sessionId: 'f5',
      image: 'runner:1',
      env: {},
      labels: {},
    });
    await flush();
    await started;
    const ref = { sessionId: 'f5', handle: 'rt-f5' };
    const f = s.follow(ref);
    await s.advance(3000);
    expect(f.text()).toBe('');
    const late = await s.start(['lines', '2'], 'f6');
    const g = s.follow(late);
    await s.advance(2500);
    expect(g.text()).toBe(lines(0, 2));
    f.stop();
  });

  it('an API outage is waited out: the lines come once it answers again', async () => {
    const s = setup();
    const ref = await s.start(['lines', '8'], 'f7');
    const f = s.follow(ref);
    await s.advance(1500);
    s.cluster.failApi(s.clock.now() + 4000);
    await s.advance(3000);
    expect(f.text()).toBe(lines(0, 2));
    // Failed reads wait longer each time (up to five polls): answering again
    // at 5.5 s, the lines are there within one such wait.
    await s.advance(5000);
    expect(f.text().startsWith(lines(0, 6))).toBe(true);
  });

  it('a rescheduled run (a new container, an empty /tmp) stops the follow: no more reads', async () => {
    const s = setup();
    const ref = await s.start(['lines', '8'], 'f8');
    const f = s.follow(ref);
    await s.advance(1500);
    s.cluster.reschedule('f8');
    await s.advance(2000); // the new container is up after 500 ms
    let reads = 0;
    const inspect = s.cluster.api.inspectService;
    s.cluster.api.inspectService = (name) => {
      reads += 1;
      return inspect(name);
    };
    await s.advance(5000);
    expect(reads).toBe(0);
    expect(f.text()).toBe(lines(0, 2));
    // The new container's file, if anything wrote one, is not the run's.
    const c = s.cluster.serviceOf('f8')?.container;
    c?.tmp.set(outputPath('f8'), 'stranger\n');
    await s.advance(2000);
    expect(f.text()).toBe(lines(0, 2));
  });

  it('never throws, even for a ref that names no valid session', () => {
    const s = setup();
    expect(() => s.follow({ sessionId: '../x', handle: 'rt-x' })).not.toThrow();
  });
});
