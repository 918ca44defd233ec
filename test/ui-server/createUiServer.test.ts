import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { BEARER_SUBPROTOCOL_PREFIX, SUBPROTOCOL } from '../../src/board/boardProtocol.js';
import { createUiServer } from '../../src/ui-server/createUiServer.js';
import { FakeBoard } from '../support/fakeBoard.js';
import { silentViewer } from './silentViewer.js';
import { ALICE, type Harness, RawClient, spec, startHarness, TOKENS } from './wsHarness.js';

let h: Harness;
afterEach(async () => {
  await h?.server.close();
});

/** Opens a socket and reports the HTTP status the upgrade was refused with. */
function refusedWith(url: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, [SUBPROTOCOL], { headers });
    ws.on('unexpected-response', (_req, res) => {
      resolve(res.statusCode ?? 0);
      ws.terminate();
    });
    ws.on('open', () => reject(new Error('upgrade was accepted')));
    ws.on('error', () => {});
  });
}

describe('upgrade guards', () => {
  it('refuses no token, a wrong token and a malformed header with 401', async () => {
    h = await startHarness();
    expect(await refusedWith(h.server.wsUrl)).toBe(401);
    expect(await refusedWith(h.server.wsUrl, { authorization: 'Bearer nope-nope-nope-nope' })).toBe(
      401,
    );
    expect(await refusedWith(h.server.wsUrl, { authorization: `Basic ${ALICE}` })).toBe(401);
    expect(h.server.connections()).toBe(0);
  });

  it('refuses other paths with 404', async () => {
    h = await startHarness();
    const url = h.server.wsUrl.replace('/ws', '/other');
    expect(await refusedWith(url, { authorization: `Bearer ${ALICE}` })).toBe(404);
  });

  it('refuses connections beyond maxConnections with 503', async () => {
    h = await startHarness({ maxConnections: 1 });
    const first = await RawClient.open(h.server.wsUrl, ALICE);
    expect(await refusedWith(h.server.wsUrl, { authorization: `Bearer ${ALICE}` })).toBe(503);
    first.ws.terminate();
  });

  it('accepts the token as a subprotocol (browsers) and selects the board protocol only', async () => {
    h = await startHarness();
    const c = await RawClient.open(h.server.wsUrl, ALICE, { viaProtocol: true });
    expect(c.ws.protocol).toBe(SUBPROTOCOL);
    c.ws.terminate();
  });
});

describe('a subscribe in the upgrade URL', () => {
  const at = (frame: unknown) =>
    `${h.server.wsUrl}?subscribe=${encodeURIComponent(JSON.stringify(frame))}`;

  it('is served after the hello, as if it were the first message', async () => {
    h = await startHarness();
    await h.board.createTask('alice', spec('first'));
    await h.board.createTask('alice', spec('second'));
    const window = { filter: { text: 'second' } };
    const c = await RawClient.open(at({ type: 'subscribe', v: 1, window }), ALICE);
    const snapshot = await c.next('snapshot');
    expect(snapshot.cards.map((card) => card.title)).toEqual(['second']);
    c.ws.terminate();
  });

  it('is answered as a bad first message would be, and the socket stays', async () => {
    h = await startHarness();
    const c = await RawClient.open(at({ type: 'subscribe', v: 2 }), ALICE);
    expect(await c.next('error')).toMatchObject({ code: 'unsupported_version' });
    c.send({ type: 'subscribe', v: 1 });
    await c.next('snapshot');
    c.ws.terminate();
  });
});

describe('lifecycle', () => {
  it('close() is idempotent and closes sockets with 1001', async () => {
    h = await startHarness();
    const c = await RawClient.open(h.server.wsUrl, ALICE);
    const first = h.server.close();
    expect(h.server.close()).toBe(first);
    await first;
    expect((await c.closed).code).toBe(1001);
  });

  it('rejects unknown options with a did-you-mean before listening', async () => {
    const board = new FakeBoard();
    const base = { source: board, commands: board, tokens: TOKENS, port: 0, host: '127.0.0.1' };
    await expect(
      createUiServer({
        ...base,
        limits: { maxPaylod: 10 } as never,
        logger: pino({ level: 'silent' }),
      }),
    ).rejects.toThrow(/limits\.maxPaylod: unknown option, did you mean "maxPayload"/);
  });
});

describe('close', () => {
  it('cuts a socket that never answers its close frame after closeGraceMs, so close() ends', async () => {
    h = await startHarness({ closeGraceMs: 1_000 });
    const port = Number(new URL(h.server.url).port);
    // Upgraded, then silent: reads nothing, answers nothing (a laptop asleep, a cut network).
    const silent = await silentViewer(
      port,
      '/ws',
      `${SUBPROTOCOL}, ${BEARER_SUBPROTOCOL_PREFIX}${ALICE}`,
    );
    let done = false;
    const closing = h.server.close().then(() => {
      done = true;
    });
    await new Promise((r) => setTimeout(r, 100));
    // Within the grace the server waits for the close handshake.
    expect(done).toBe(false);
    h.clock.advance(1_000);
    // Before, ws waited 30 s for it, and the listener's close with it.
    const deadline = new Promise<'late'>((r) => setTimeout(() => r('late'), 5_000).unref());
    expect(await Promise.race([closing.then(() => 'closed' as const), deadline])).toBe('closed');
    silent.destroy();
  });
});
