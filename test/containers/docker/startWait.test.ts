/**
 * How a Docker start waits for its container, without an engine: the wait
 * loop on a simulated clock, and SwarmBackend over a fake dockerode whose
 * tasks are scripted (states a real engine produces only by accident).
 */
import type Docker from 'dockerode';
import { describe, expect, it } from 'vitest';
import { SimulatedClock } from 'xstate';
import { DockerBackend } from '../../../src/containers/docker/DockerBackend.js';
import { SwarmBackend } from '../../../src/containers/docker/SwarmBackend.js';
import { type StartHold, waitForRunning } from '../../../src/containers/docker/startWait.js';
import { rejection } from '../contract.js';

const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

async function drive<T>(clock: SimulatedClock, p: Promise<T>, stepMs = 250): Promise<T> {
  let done = false;
  p.then(
    () => {
      done = true;
    },
    () => {
      done = true;
    },
  );
  for (let i = 0; i < 2000 && !done; i += 1) {
    await flush();
    if (!done) clock.increment(stepMs);
  }
  return p;
}

describe('waitForRunning', () => {
  const base = { handle: 'rt-s1', timeoutMs: 10_000, pollMs: 250 };
  /** A wait whose container never runs, for the engine's `hold` answers. */
  const neverRunning = (clock: SimulatedClock, hold: () => Promise<StartHold | null>) =>
    rejection(drive(clock, waitForRunning({ ...base, clock, current: async () => null, hold })));

  it('resolves with the container once it runs', async () => {
    const clock = new SimulatedClock();
    let polls = 0;
    const container = { id: 'c1', startedAt: null };
    const running = waitForRunning({
      ...base,
      clock,
      current: async () => (++polls >= 3 ? container : null),
      hold: async () => ({ refused: false, reason: 'task preparing' }),
    });
    expect(await drive(clock, running)).toBe(container);
    expect(polls).toBe(3);
  });

  it('stops at the first refusal with the engine’s reason, cut to one line', async () => {
    const clock = new SimulatedClock();
    const holds: StartHold[] = [
      { refused: false, reason: 'task preparing' },
      { refused: true, reason: 'No such image:\n  runner:9' },
    ];
    const refused = await neverRunning(clock, async () => holds.shift() ?? null);
    expect(refused.code).toBe('rejected');
    expect(refused.message).toBe('No such image: runner:9');
    expect(clock.now()).toBeLessThan(1000);
  });

  it('times out on the injected clock, naming the last reason the engine gave', async () => {
    const clock = new SimulatedClock();
    const timedOut = await neverRunning(clock, async () => ({
      refused: false,
      reason: 'pending: no suitable node',
    }));
    expect(timedOut.code).toBe('timeout');
    expect(timedOut.message).toBe(
      'rt-s1 had no running container after 10000 ms (pending: no suitable node)',
    );
    expect(clock.now()).toBeGreaterThanOrEqual(10_000);
  });
});

interface FakeTask {
  Status: { State: string; Err?: string; Timestamp: string };
}

/** The dockerode calls a Swarm start makes before the exec, over scripted tasks. */
function fakeSwarm(tasksAt: (listing: number) => FakeTask[]) {
  const removed: string[] = [];
  const filters: unknown[] = [];
  let listing = 0;
  const docker = {
    createService: async () => ({ id: 'svc' }),
    getService: (name: string) => ({
      inspect: async () => ({ Spec: { Name: name } }),
      remove: async () => {
        removed.push(name);
      },
    }),
    listTasks: async (options: { filters: Record<string, string[]> }) => {
      filters.push(options.filters);
      // currentContainer asks for desired-state running; the hold for every task.
      if (options.filters['desired-state']) return [];
      listing += 1;
      return tasksAt(listing);
    },
  };
  return { docker: docker as unknown as Docker, removed, filters };
}

const at = (s: number) => new Date(Date.UTC(2026, 6, 14, 10, 0, s)).toISOString();
const spec = { sessionId: 's1', image: 'runner:9', command: ['echo', 'hi'] };

describe('SwarmBackend start over scripted tasks', () => {
  it('a task that failed with an error is a refusal: rejected at once, service removed', async () => {
    const clock = new SimulatedClock();
    const fake = fakeSwarm((n) => [
      { Status: { State: 'preparing', Timestamp: at(2) } },
      ...(n >= 2
        ? [{ Status: { State: 'failed', Err: 'task: non-zero exit (127)', Timestamp: at(1) } }]
        : []),
    ]);
    const backend = new SwarmBackend({ docker: fake.docker, clock });
    const refused = await rejection(drive(clock, backend.start(spec)));
    expect(refused).toMatchObject({ code: 'rejected', message: 'task: non-zero exit (127)' });
    expect(fake.removed).toEqual(['rt-s1']);
    expect(fake.filters).toContainEqual({ service: ['rt-s1'] });
  });

  it('a task that stays pending ends at the start timeout with Swarm’s reason', async () => {
    const clock = new SimulatedClock();
    const fake = fakeSwarm(() => [
      {
        Status: {
          State: 'pending',
          Err: 'no suitable node (1 node not available)',
          Timestamp: at(1),
        },
      },
    ]);
    const backend = new SwarmBackend({ docker: fake.docker, clock, startTimeoutMs: 5000 });
    const timedOut = await rejection(drive(clock, backend.start(spec)));
    expect(timedOut.code).toBe('timeout');
    expect(timedOut.message).toContain('pending: no suitable node (1 node not available)');
    expect(fake.removed).toEqual(['rt-s1']);
  });

  it('ping answers ok, or the code and message of an engine that does not', async () => {
    const up = { ping: async () => Buffer.from('OK') } as unknown as Docker;
    expect(await new SwarmBackend({ docker: up }).ping()).toEqual({ ok: true });
    const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    const down = { ping: async () => Promise.reject(refused) } as unknown as Docker;
    expect(await new SwarmBackend({ docker: down }).ping()).toEqual({
      ok: false,
      code: 'unavailable',
      message: 'ping: engine unavailable',
    });
  });

  it('a hung ping times out at the call deadline on the injected clock', async () => {
    const clock = new SimulatedClock();
    const hung = { ping: () => new Promise(() => undefined) } as unknown as Docker;
    const backend = new SwarmBackend({ docker: hung, clock, callTimeoutMs: 1000 });
    expect(await drive(clock, backend.ping())).toEqual({
      ok: false,
      code: 'timeout',
      message: 'ping took longer than 1000 ms',
    });
  });
});

describe('DockerBackend start over a fake engine', () => {
  it('a 404 from create is the engine refusing the spec: rejected with its message', async () => {
    const missing = Object.assign(new Error('(HTTP code 404) no such container'), {
      statusCode: 404,
      json: { message: 'No such image: runner:9' },
    });
    const docker = { createContainer: async () => Promise.reject(missing) } as unknown as Docker;
    const refused = await rejection(new DockerBackend({ docker }).start(spec));
    expect(refused).toMatchObject({ code: 'rejected', message: 'No such image: runner:9' });
    expect(refused.cause).toBe(missing);
  });

  it('a container the engine could not start (State.Error) is rejected and removed', async () => {
    const clock = new SimulatedClock();
    const removed: string[] = [];
    const docker = {
      createContainer: async () => ({ start: async () => undefined }),
      getContainer: (name: string) => ({
        inspect: async () => ({
          Id: 'c1',
          State: { Running: false, Status: 'restarting', Error: 'exec: "sh": not found' },
        }),
        remove: async () => {
          removed.push(name);
        },
      }),
    } as unknown as Docker;
    const refused = await rejection(drive(clock, new DockerBackend({ docker, clock }).start(spec)));
    expect(refused).toMatchObject({ code: 'rejected', message: 'exec: "sh": not found' });
    expect(removed).toEqual(['rt-s1']);
  });
});
