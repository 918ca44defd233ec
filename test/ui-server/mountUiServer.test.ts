/**
 * The board mounted on an app's own node:http server: the board's paths are
 * answered with the same guards as on its own listener, every other path is
 * left to the app, a hostile request on a board path cannot end the process,
 * and closing the board leaves the app's server serving.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { type MountedUiServer, mountUiServer } from '../../src/ui-server/mountUiServer.js';
import { FakeBoard } from '../support/fakeBoard.js';
import { ALICE, ManualClock, RawClient, TOKENS } from './wsHarness.js';

let app: Server | undefined;
let board: MountedUiServer | undefined;
afterEach(async () => {
  await board?.close();
  app?.closeAllConnections();
  await new Promise((r) => (app ? app.close(r) : r(undefined)));
  app = undefined;
  board = undefined;
});

async function mounted(limits = {}): Promise<string> {
  const fake = new FakeBoard({ maxRunning: 2 });
  const mountedBoard = await mountUiServer({
    source: fake,
    commands: fake,
    tokens: TOKENS,
    clock: new ManualClock(),
    limits,
    logger: pino({ level: 'silent' }),
  });
  board = mountedBoard;
  const server = createServer((req, res) => {
    if (mountedBoard.handleRequest(req, res)) return;
    res.writeHead(200, { 'content-type': 'text/plain' }).end(`app ${req.url}`);
  });
  server.on('upgrade', (req, socket, head) => {
    if (!mountedBoard.handleUpgrade(req, socket, head)) socket.end('HTTP/1.1 418 App\r\n\r\n');
  });
  app = server;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Writes raw bytes and resolves with what came back before the socket closed (bounded). */
function raw(address: string, bytes: string): Promise<string> {
  const [host, port] = address.split(':');
  return new Promise((resolve, reject) => {
    const s = connect(Number(port), host, () => s.write(bytes));
    let got = '';
    s.on('data', (d) => {
      got += d.toString();
    });
    s.on('close', () => resolve(got));
    s.on('error', reject);
    s.setTimeout(5_000, () => {
      s.destroy();
      resolve(got);
    });
  });
}

describe('mountUiServer', () => {
  it('answers the board paths and leaves every other path to the app', async () => {
    const at = await mounted();
    const page = await fetch(`http://${at}/`);
    expect([page.status, page.headers.get('content-type')]).toEqual([
      200,
      'text/html; charset=utf-8',
    ]);
    expect((await fetch(`http://${at}/healthz`)).status).toBe(200);
    expect((await fetch(`http://${at}/api/pool`)).status).toBe(401);
    expect((await fetch(`http://${at}/api/nope`)).status).toBe(404);
    const mine = await fetch(`http://${at}/jobs?x=1`);
    expect([mine.status, await mine.text()]).toEqual([200, 'app /jobs?x=1']);
    // The inspector is not mounted: its paths are the app's.
    expect(await (await fetch(`http://${at}/inspect`)).text()).toBe('app /inspect');
  });

  it('upgrades /ws with the board guards and leaves other upgrades to the app', async () => {
    const at = await mounted({ maxConnections: 1 });
    const client = await RawClient.open(`ws://${at}/ws`, ALICE);
    expect(board?.connections()).toBe(1);
    const upgrade = (path: string, auth = '') =>
      raw(
        at,
        `GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n` +
          `Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n${auth}\r\n`,
      );
    expect(await upgrade('/ws')).toMatch(/^HTTP\/1.1 401/);
    expect(await upgrade('/ws', `Authorization: Bearer ${ALICE}\r\n`)).toMatch(/^HTTP\/1.1 503/);
    expect(await upgrade('/elsewhere')).toMatch(/^HTTP\/1.1 418/);
    client.ws.terminate();
  });

  it('survives hostile targets on the board paths and the app keeps answering', async () => {
    const at = await mounted();
    for (const target of ['//[', '/api/tasks/%E0%A4%A', '/api/tasks/x/sessions/%/output']) {
      const got = await raw(at, `GET ${target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
      expect(got, target).toMatch(/^HTTP\/1.1 (200|400|401|404)/);
    }
    expect(
      await raw(at, 'GET //[ HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n'),
    ).toMatch(/^HTTP\/1.1 418/);
    expect((await fetch(`http://${at}/jobs`)).status).toBe(200);
  });

  it('close() closes the board sockets (1001) but not the app server', async () => {
    const at = await mounted();
    const client = await RawClient.open(`ws://${at}/ws`, ALICE);
    await board?.close();
    expect((await client.closed).code).toBe(1001);
    expect(
      await raw(
        at,
        `GET /ws HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nAuthorization: Bearer ${ALICE}\r\n\r\n`,
      ),
    ).toMatch(/^HTTP\/1.1 503/);
    expect(await (await fetch(`http://${at}/jobs`)).text()).toBe('app /jobs');
  });
});
