import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SimulatedClock } from 'xstate';
import * as base from '../../../src/containers/docker/DockerRunBackend.js';
import { parseStartedAt, SwarmBackend } from '../../../src/containers/docker/SwarmBackend.js';
import { runDocExamples } from '../../support/docExamples.js';

runDocExamples(new URL('../../../src/containers/docker/dockerClient.ts', import.meta.url), base);

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

describe('an engine that hangs or errors (a fake socket, no Docker needed)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'roundtable-fake-engine-'));
  const servers: Server[] = [];
  const sockets: Socket[] = [];
  afterAll(async () => {
    // close() waits for open connections, and the hung one never ends by itself.
    for (const socket of sockets) socket.destroy();
    for (const s of servers) await new Promise((r) => s.close(r));
    rmSync(dir, { recursive: true, force: true });
  });

  async function fakeEngine(name: string, onRequest: (socket: Socket) => void): Promise<string> {
    const path = join(dir, name);
    const server = createServer((socket) => {
      sockets.push(socket);
      onRequest(socket);
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(path, resolve));
    return `unix://${path}`;
  }

  it('a hung engine times out on the injected clock and observe says unknown', async () => {
    const accepted: Socket[] = [];
    const host = await fakeEngine('hang.sock', (socket) => {
      accepted.push(socket);
    });
    const clock = new SimulatedClock();
    const backend = new SwarmBackend({ host, clock, callTimeoutMs: 1000 });
    const seen = backend.observe({ handle: 'rt-s1', sessionId: 's1' });
    while (accepted.length === 0) await new Promise((r) => setImmediate(r));
    clock.increment(1000);
    expect(await seen).toMatchObject({ presence: 'unknown', error: { code: 'timeout' } });
  });

  it('an engine answering 500 is unknown, and a 404 is absent', async () => {
    const reply = (status: string) => (socket: Socket) =>
      socket.once('data', () =>
        socket.end(
          `HTTP/1.1 ${status}\r\nContent-Type: application/json\r\nContent-Length: 17\r\nConnection: close\r\n\r\n{"message":"no!"}`,
        ),
      );
    const broken = new SwarmBackend({ host: await fakeEngine('500.sock', reply('500 Oops')) });
    expect(await broken.observe({ handle: 'rt-s1', sessionId: 's1' })).toMatchObject({
      presence: 'unknown',
      error: { code: 'engine' },
    });
    const empty = new SwarmBackend({ host: await fakeEngine('404.sock', reply('404 Not Found')) });
    expect(await empty.observe({ handle: 'rt-s1', sessionId: 's1' })).toEqual({
      presence: 'absent',
      containerStartedAt: null,
      marker: null,
    });
  });
});
