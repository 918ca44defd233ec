import { mkdtempSync, rmSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SimulatedClock } from 'xstate';
import { DockerBackend } from '../../../src/containers/docker/DockerBackend.js';
import * as base from '../../../src/containers/docker/DockerRunBackend.js';
import { parseStartedAt, SwarmBackend } from '../../../src/containers/docker/SwarmBackend.js';
import { runDocExamples } from '../../support/docExamples.js';
import { within } from '../../support/within.js';

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

describe('an exec that hangs past the call deadline (a fake engine, no Docker needed)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'roundtable-fake-exec-'));
  const sockets: Socket[] = [];
  const closers: Array<() => Promise<void>> = [];
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    for (const close of closers) await close();
    rmSync(dir, { recursive: true, force: true });
  });

  /**
   * An engine whose one container runs and accepts execs, and whose exec
   * streams upgrade and then say nothing, as a hung `docker exec` does.
   * `hijacked` holds, for each stream, whether the client has closed it.
   */
  async function hangingExecEngine(name: string) {
    const hijacked: Array<{ closed: Promise<void> }> = [];
    const server = createHttpServer((req, res) => {
      const reply = (status: number, body: unknown) => {
        res.writeHead(status, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      if (req.method === 'GET' && req.url?.startsWith('/containers/rt-s1/json')) {
        reply(200, {
          Id: 'c1',
          State: { Running: true, Restarting: false, StartedAt: '2026-07-14T12:47:00Z' },
        });
      } else if (req.method === 'POST' && req.url?.startsWith('/containers/c1/exec')) {
        reply(201, { Id: 'e1' });
      } else reply(404, { message: `no ${req.method} ${req.url}` });
    });
    server.on('connection', (socket: Socket) => sockets.push(socket));
    server.on('upgrade', (_req, socket: Socket) => {
      const closed = new Promise<void>((resolve) => {
        socket.once('end', resolve);
        socket.once('close', resolve);
        // A destroyed client may reset the connection: that is a close too.
        socket.once('error', () => resolve());
      });
      hijacked.push({ closed });
      socket.write(
        'HTTP/1.1 101 UPGRADED\r\nContent-Type: application/vnd.docker.raw-stream\r\nConnection: Upgrade\r\nUpgrade: tcp\r\n\r\n',
      );
    });
    const path = join(dir, name);
    await new Promise<void>((resolve) => server.listen(path, resolve));
    closers.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const clock = new SimulatedClock();
    const backend = new DockerBackend({ host: `unix://${path}`, clock, callTimeoutMs: 1000 });
    const upgraded = async (n: number) => {
      while (hijacked.length < n) await new Promise((r) => setImmediate(r));
    };
    return { backend, clock, hijacked, upgraded };
  }

  const ref = { handle: 'rt-s1', sessionId: 's1' };

  it('readOutput times out and its exec stream is closed, not left open', async () => {
    const { backend, clock, hijacked, upgraded } = await hangingExecEngine('read.sock');
    const read = backend.readOutput(ref);
    await upgraded(1);
    clock.increment(1000);
    await expect(read).rejects.toMatchObject({ code: 'timeout' });
    await within(hijacked[0]?.closed ?? Promise.reject(), 'the exec stream closing', 2000);
  });

  it('observe says the marker is unknown and its exec stream is closed', async () => {
    const { backend, clock, hijacked, upgraded } = await hangingExecEngine('observe.sock');
    const seen = backend.observe(ref);
    await upgraded(1);
    clock.increment(1000);
    expect(await seen).toMatchObject({ presence: 'present', error: { code: 'timeout' } });
    await within(hijacked[0]?.closed ?? Promise.reject(), 'the exec stream closing', 2000);
  });

  it('a follow’s timed-out reads close their exec streams, the stop’s final read too', async () => {
    const { backend, clock, hijacked, upgraded } = await hangingExecEngine('follow.sock');
    const stop = new AbortController();
    let ended = false;
    backend.follow(ref, {
      signal: stop.signal,
      onOutput: () => undefined,
      onEnd: () => {
        ended = true;
      },
    });
    clock.increment(0);
    await upgraded(1);
    clock.increment(1000);
    await within(hijacked[0]?.closed ?? Promise.reject(), 'the first read’s stream closing', 2000);
    stop.abort();
    await upgraded(2);
    clock.increment(1000);
    await within(hijacked[1]?.closed ?? Promise.reject(), 'the final read’s stream closing', 2000);
    while (!ended) await new Promise((r) => setImmediate(r));
  });
});
