import { expect, it } from 'vitest';
import * as base from '../../../src/containers/docker/DockerRunBackend.js';
import { parseStartedAt } from '../../../src/containers/docker/SwarmBackend.js';
import { runDocExamples } from '../../support/docExamples.js';

runDocExamples(
  new URL('../../../src/containers/docker/DockerRunBackend.ts', import.meta.url),
  base,
);

it('reads Docker’s zero time as unknown, not as a start', () => {
  expect(parseStartedAt('0001-01-01T00:00:00Z')).toBeNull();
  expect(parseStartedAt(undefined)).toBeNull();
  expect(parseStartedAt('2026-07-14T12:47:00.123456789Z')?.toISOString()).toBe(
    '2026-07-14T12:47:00.123Z',
  );
});

it('builds a client for a unix socket or a tcp address without contacting it', () => {
  type Modem = { socketPath?: string; host?: string };
  const modem = (host: string) => base.dockerClient(host).modem as unknown as Modem;
  expect(modem('unix:///run/x.sock').socketPath).toBe('/run/x.sock');
  expect(modem('tcp://10.0.0.5:2376').host).toBe('10.0.0.5');
});
