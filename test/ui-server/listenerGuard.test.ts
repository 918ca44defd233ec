/**
 * No request can end the process: request targets `new URL()` refuses,
 * malformed headers and bodies, on plain requests and upgrades, with the
 * inspector mounted, written on raw sockets. Each is answered (a typed 400
 * where the guard answers) and the server keeps serving.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import type { UiServer } from '../../src/ui-server/createUiServer.js';
import { createInspector } from '../../src/ui-server/inspector/createInspector.js';
import { startInspectorServer } from '../../src/ui-server/inspector/startInspectorServer.js';
import * as guard from '../../src/ui-server/listenerGuard.js';
import {
  GUARD_CODES,
  guardRequest,
  guardUpgrade,
  UiRequestError,
} from '../../src/ui-server/listenerGuard.js';
import { runDocExamples } from '../support/docExamples.js';
import {
  badTargetRequests,
  errorCodeOf,
  malformedRequests,
  rawExchange,
  slashedPathRequests,
} from './hostileInput.js';
import { ADMIN, ALICE, RawClient, serveWithInspector } from './wsHarness.js';

runDocExamples(new URL('../../src/ui-server/listenerGuard.ts', import.meta.url), guard);

const silent = pino({ level: 'silent' });
const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

async function uiServer(): Promise<UiServer> {
  const server = await serveWithInspector(silent);
  closers.push(() => server.close());
  return server;
}

const healthy = async (url: string) => (await fetch(`${url}/healthz`)).status;

describe('the UI server with the inspector mounted', () => {
  it.each(badTargetRequests())('answers 400 bad_target to %s and keeps serving', async (r) => {
    const server = await uiServer();
    const answer = await rawExchange(server.port, r.bytes);
    expect(answer.status).toBe(400);
    expect(errorCodeOf(answer)).toBe(GUARD_CODES.badTarget);
    expect(await healthy(server.url)).toBe(200);
  });

  it.each(slashedPathRequests())('answers 404 not_found to %s (a path, not a host)', async (r) => {
    const server = await uiServer();
    const answer = await rawExchange(server.port, r.bytes);
    expect(answer.status).toBe(404);
    expect(answer.text).toContain('"code":"not_found"');
    expect(await healthy(server.url)).toBe(200);
  });

  it('survives every malformed header and body, one after another, and still streams', async () => {
    const server = await uiServer();
    const statuses: Record<string, number | null> = {};
    for (const r of malformedRequests(ALICE)) {
      statuses[r.name] = (await rawExchange(server.port, r.bytes, 1000)).status;
      expect(await healthy(server.url)).toBe(200);
    }
    // Answered, not just cut: the parser's 400/431, the API's typed codes.
    expect(statuses['huge header']).toBe(431);
    expect(statuses['body not JSON']).toBe(400);
    expect(statuses['oversized body']).toBe(413);
    expect(statuses['inspector upgrade, bad target']).toBe(400);
    const c = await RawClient.open(server.wsUrl, ADMIN);
    c.send({ type: 'subscribe', v: 1 });
    expect((await c.next('snapshot')).type).toBe('snapshot');
    c.ws.terminate();
  });
});

describe('the inspector alone', () => {
  it.each(badTargetRequests())('answers 400 to %s', async (r) => {
    const inspector = createInspector({ logger: silent });
    const server = await startInspectorServer({
      inspector,
      tokens: { admin: ADMIN },
      port: 0,
      host: '127.0.0.1',
    });
    closers.push(() => server.close());
    const answer = await rawExchange(server.port, r.bytes);
    expect(answer.status).toBe(400);
    expect((await fetch(`${server.url}/inspect`)).status).toBe(200);
  });
});

describe('guardRequest and guardUpgrade', () => {
  async function listen(server: Server): Promise<number> {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(() => new Promise((resolve) => server.close(resolve)));
    return (server.address() as AddressInfo).port;
  }
  const errors: unknown[] = [];
  const logger = { warn: () => {}, error: (obj: object) => errors.push(obj) };
  const upgrade = 'GET / HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n';

  it('answers a typed error with its status and code, unlogged', async () => {
    const server = createServer(
      guardRequest(() => {
        throw new UiRequestError(429, 'slow_down', 'later');
      }, logger),
    );
    const answer = await rawExchange(await listen(server), 'GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(answer.status).toBe(429);
    expect(errorCodeOf(answer)).toBe('slow_down');
  });

  it('answers 500 internal to a sync throw and to a rejected promise, and logs both', async () => {
    errors.length = 0;
    let n = 0;
    const server = createServer(
      guardRequest(() => {
        n += 1;
        if (n === 1) throw new Error('sync');
        return Promise.reject(new Error('async'));
      }, logger),
    );
    const port = await listen(server);
    for (let i = 0; i < 2; i++) {
      const answer = await rawExchange(port, 'GET / HTTP/1.1\r\nHost: x\r\n\r\n');
      expect(answer.status).toBe(500);
      expect(errorCodeOf(answer)).toBe('internal');
      expect(answer.text).not.toMatch(/sync|async/);
    }
    expect(errors).toHaveLength(2);
  });

  it('cuts a response that had started instead of writing a second one', async () => {
    const server = createServer(
      guardRequest((_req, res) => {
        res.writeHead(200, { 'content-length': '10' });
        res.write('12345');
        throw new Error('half way');
      }, logger),
    );
    const answer = await rawExchange(await listen(server), 'GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    // Whatever of the 200 got out before the cut, never a second status line.
    expect(answer.text).not.toMatch(/HTTP\/1\.1 500|internal/);
  });

  it('refuses a failed upgrade with 500, and destroys one that had written already', async () => {
    let n = 0;
    const server = createServer();
    server.on(
      'upgrade',
      guardUpgrade((_req, socket) => {
        n += 1;
        if (n === 2) socket.write('HTTP/1.1 101 Switching Protocols\r\n\r\n');
        throw new Error('boom');
      }, logger),
    );
    const port = await listen(server);
    const first = await rawExchange(port, upgrade);
    expect(first.status).toBe(500);
    expect(errorCodeOf(first)).toBe('internal');
    const second = await rawExchange(port, upgrade);
    expect(second.text).toBe('HTTP/1.1 101 Switching Protocols\r\n\r\n');
  });
});
