/**
 * The listener's own limits, on real sockets: clients that open connections
 * and trickle partial requests (the hostile test that used up the node's
 * file descriptors) are capped per address and in all, and cut at the
 * headers deadline, while other addresses and established authenticated
 * WebSockets keep being served. Other addresses are other loopback source
 * addresses (127.0.0.2, ...): on Linux all of 127/8 reaches a listener on
 * 127.0.0.1.
 */
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import * as limitsModule from '../../src/ui-server/listenerLimits.js';
import { mountUiServer } from '../../src/ui-server/mountUiServer.js';
import { runDocExamples } from '../support/docExamples.js';
import { FakeBoard } from '../support/fakeBoard.js';
import { ADMIN, ALICE, type Harness, RawClient, startHarness, TOKENS } from './wsHarness.js';

runDocExamples(new URL('../../src/ui-server/listenerLimits.ts', import.meta.url), limitsModule);

/** Every wait below ends by this deadline. */
const DEADLINE_MS = 3_000;
const PARTIAL = 'GET /healthz HTTP/1.1\r\nHost: x\r\n';
const WHOLE = 'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n';

let h: Harness | undefined;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await h?.server.close();
  h = undefined;
});

/** A raw connection from `from`, with what it received and when it closed. */
interface RawConnection {
  socket: Socket;
  received(): string;
  /** Resolves at close with ms since connect; rejects past the deadline. */
  closed: Promise<number>;
}

async function open(port: number, from: string, send?: string): Promise<RawConnection> {
  const socket = connect({ host: '127.0.0.1', port, localAddress: from });
  sockets.push(socket);
  let text = '';
  socket.on('data', (d) => {
    text += String(d);
  });
  socket.on('error', () => {});
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  const start = Date.now();
  const closed = new Promise<number>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`still open after ${DEADLINE_MS} ms`)),
      DEADLINE_MS,
    );
    socket.once('close', () => {
      clearTimeout(timer);
      resolve(Date.now() - start);
    });
  });
  closed.catch(() => {});
  if (send !== undefined) socket.write(send);
  return { socket, received: () => text, closed };
}

/** One whole GET /healthz from `from`: the status line, or '' when closed without one. */
async function statusFrom(port: number, from: string): Promise<string> {
  const c = await open(port, from, WHOLE);
  await c.closed;
  return c.received().split('\r\n')[0] ?? '';
}

/** The refusals `/metrics` counts on `port`, by code. */
async function refusals(port: number): Promise<Record<string, number>> {
  const r = await fetch(`http://127.0.0.1:${port}/metrics`, {
    headers: { authorization: `Bearer ${ADMIN}` },
  });
  const counts: Record<string, number> = {};
  for (const m of (await r.text()).matchAll(
    /^roundtable_http_refusals_total\{code="([^"]+)"\} (\d+)$/gm,
  ))
    counts[m[1] as string] = Number(m[2]);
  return counts;
}

/** Lets the server see connections that already connected (their 'connection' events). */
const settle = () => new Promise<void>((r) => setTimeout(r, 50));

describe('connections per address', () => {
  it('an address past its cap is refused with 429 while another address is served', async () => {
    h = await startHarness({ maxTcpConnections: 20, maxTcpConnectionsPerAddress: 3 });
    const { port } = h.server;
    const held = [];
    for (let i = 0; i < 3; i++) held.push(await open(port, '127.0.0.2', PARTIAL));
    await settle();
    const refused = await open(port, '127.0.0.2', PARTIAL);
    await refused.closed;
    expect(refused.received()).toMatch(/^HTTP\/1\.1 429 /);
    expect(refused.received()).toContain('"code":"too_many_address_connections"');
    expect(await statusFrom(port, '127.0.0.3')).toBe('HTTP/1.1 200 OK');
    expect(await statusFrom(port, '127.0.0.1')).toBe('HTTP/1.1 200 OK');
    // A place given back is a place again.
    held[0]?.socket.destroy();
    await held[0]?.closed;
    await settle();
    expect(await statusFrom(port, '127.0.0.2')).toBe('HTTP/1.1 200 OK');
    expect(await refusals(port)).toEqual({ too_many_address_connections: 1 });
  });

  it('past maxTcpConnections a new connection is closed unanswered; an open WebSocket keeps working', async () => {
    h = await startHarness({ maxTcpConnections: 4, maxTcpConnectionsPerAddress: 2 });
    const { port } = h.server;
    const alice = await RawClient.open(h.server.wsUrl, ALICE);
    for (const from of ['127.0.0.2', '127.0.0.2', '127.0.0.3']) await open(port, from, PARTIAL);
    await settle();
    const dropped = await open(port, '127.0.0.4', WHOLE).catch(() => null);
    if (dropped !== null) {
      await dropped.closed;
      expect(dropped.received()).toBe('');
    }
    alice.send({ type: 'ping', id: 'still-here' });
    expect(await alice.next('pong')).toMatchObject({ id: 'still-here' });
    alice.close();
    await alice.closed;
    for (const s of sockets.splice(0)) s.destroy();
    await settle();
    expect((await refusals(port)).too_many_connections).toBeGreaterThanOrEqual(1);
  });
});

describe('deadlines for a request to arrive', () => {
  it('a request trickling its headers is answered 408 and closed at the headers deadline', async () => {
    h = await startHarness({ headersTimeoutMs: 200, requestTimeoutMs: 400 });
    const slow = await open(h.server.port, '127.0.0.2', PARTIAL);
    const trickle = setInterval(() => slow.socket.write('X-Slow: 1\r\n'), 40);
    try {
      const after = await slow.closed;
      expect(after).toBeGreaterThanOrEqual(150);
      expect(slow.received()).toMatch(/^HTTP\/1\.1 408 /);
    } finally {
      clearInterval(trickle);
    }
    const silent = await open(h.server.port, '127.0.0.2');
    expect(await silent.closed).toBeLessThan(DEADLINE_MS);
    expect(slow.received()).toContain('"code":"request_timeout"');
    expect(await refusals(h.server.port)).toEqual({ request_timeout: 2 });
  });

  it('a request Node cannot parse is answered 400 and counted', async () => {
    h = await startHarness({});
    const bad = await open(h.server.port, '127.0.0.2', 'NOT A REQUEST\r\n\r\n');
    await bad.closed;
    expect(bad.received()).toMatch(/^HTTP\/1\.1 400 /);
    expect(await refusals(h.server.port)).toEqual({ bad_request: 1 });
  });

  it('a body trickling past the request deadline is cut', async () => {
    h = await startHarness({ headersTimeoutMs: 100, requestTimeoutMs: 300 });
    const post =
      'POST /api/tasks HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
      `Authorization: Bearer ${ALICE}\r\nContent-Length: 1000\r\n\r\n{`;
    const slow = await open(h.server.port, '127.0.0.2', post);
    const trickle = setInterval(() => slow.socket.write(' '), 40);
    try {
      expect(await slow.closed).toBeGreaterThanOrEqual(250);
      expect(slow.received()).toMatch(/^HTTP\/1\.1 408 /);
    } finally {
      clearInterval(trickle);
    }
  });

  it('an authenticated WebSocket outlives both deadlines', async () => {
    h = await startHarness({ headersTimeoutMs: 100, requestTimeoutMs: 200 });
    const alice = await RawClient.open(h.server.wsUrl, ALICE);
    await new Promise((r) => setTimeout(r, 500));
    alice.send({ type: 'ping', id: 'later' });
    expect(await alice.next('pong')).toMatchObject({ id: 'later' });
    alice.close();
  });
});

it('a mounted board refuses the listener limits: they are the app server’s', async () => {
  const board = new FakeBoard();
  await expect(
    mountUiServer({
      source: board,
      commands: board,
      tokens: TOKENS,
      limits: { headersTimeoutMs: 1_000 },
    }),
  ).rejects.toThrow(/limits\.headersTimeoutMs: a mounted board has no listener/);
});
