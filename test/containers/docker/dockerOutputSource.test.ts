/**
 * The Docker follow's answer parsing, engine-free (doc examples), and the
 * source over a fake engine: the container found once and read by id, a
 * gone container told from an outage.
 */
import type Docker from 'dockerode';
import { expect, it } from 'vitest';
import { ContainerError } from '../../../src/containers/ContainerError.js';
import * as source from '../../../src/containers/docker/dockerOutputSource.js';
import { runDocExamples } from '../../support/docExamples.js';

runDocExamples(
  new URL('../../../src/containers/docker/dockerOutputSource.ts', import.meta.url),
  source,
);

/** The source sets no timer of its own: the follower does. */
const clock = { now: () => 0, setTimeout: () => null, clearTimeout: () => {} };

/** An engine whose every call fails with `error`. */
const failing = (error: ContainerError) => ({
  docker: {} as Docker,
  call: () => Promise.reject(error),
});

it('an engine that does not answer is an error to retry, not a replaced container', async () => {
  const down = new ContainerError('unavailable', 'engine unavailable');
  const s = source.dockerOutputSource(
    {
      engine: failing(down),
      clock,
      current: () => Promise.reject(down),
      limitBytes: 1024,
    },
    'rt-s1',
    '/tmp/roundtable-output-s1.log',
  );
  await expect(s.read(0, 1024)).rejects.toMatchObject({ code: 'unavailable' });
});

it('a handle gone (no such service) is a replaced run; no container running yet is a file not there yet', async () => {
  const make = (current: () => Promise<null>) =>
    source.dockerOutputSource(
      {
        engine: failing(new ContainerError('engine', 'unused')),
        clock,
        current,
        limitBytes: 1024,
      },
      'rt-s1',
      '/tmp/roundtable-output-s1.log',
    );
  const gone = make(() => Promise.reject(new ContainerError('not_found', 'no service')));
  expect(await gone.read(0, 1024)).toEqual({ kind: 'replaced' });
  const pending = make(() => Promise.resolve(null));
  expect(await pending.read(0, 1024)).toEqual({ kind: 'missing' });
});

it('a container that stopped under the read, with another one under the handle now, is replaced', async () => {
  let now = { id: 'c1', startedAt: new Date(1000) };
  const s = source.dockerOutputSource(
    {
      engine: failing(new ContainerError('conflict', 'container c1 is not running')),
      clock,
      current: async () => now,
      limitBytes: 1024,
    },
    'rt-s1',
    '/tmp/roundtable-output-s1.log',
  );
  // The same container still there: the failure is the engine's, retried.
  await expect(s.read(0, 1024)).rejects.toMatchObject({ code: 'conflict' });
  now = { id: 'c1', startedAt: new Date(2000) }; // restarted in place: a fresh tmpfs
  expect(await s.read(0, 1024)).toEqual({ kind: 'replaced' });
});
