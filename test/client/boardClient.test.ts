import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import type { ServerFrame } from '../../src/board/boardProtocol.js';
import { createBoardApi } from '../../src/client/boardApi.js';
import {
  type BoardClient,
  connectBoard,
  type WebSocketConstructor,
} from '../../src/client/boardClient.js';
import { createUiServer } from '../../src/ui-server/createUiServer.js';
import { FakeBoard } from '../support/fakeBoard.js';
import { ALICE, byTask, type Harness, spec, startHarness, TOKENS } from '../ui-server/wsHarness.js';
import { ManualTimers, queuedCard, ScriptedSocket, until } from './clientHarness.js';

// `ws`'s constructor is one as it is (docs: "the browser's, or `ws`'s"), no cast.
const WS: WebSocketConstructor = WebSocket;
let h: Harness | null = null;
let client: BoardClient | null = null;
afterEach(async () => {
  client?.close();
  client = null;
  await h?.server.close();
  h = null;
});

const cardsOf = (c: BoardClient) => byTask(Object.values(c.store.getSnapshot().context.cards));
const storeSub = (c: BoardClient) => (fn: () => void) => c.store.subscribe(fn);

describe('against a real server', () => {
  it('fills the read model from the snapshot, then from live patches', async () => {
    h = await startHarness();
    await h.board.createTask('alice', spec('before'));
    client = connectBoard({ url: h.server.wsUrl, token: ALICE, WebSocket: WS });
    const c = client;
    await until(storeSub(c), () => c.store.getSnapshot().context.connection === 'live', 'live');
    expect(c.store.getSnapshot().context.userId).toBe('alice');
    const api = createBoardApi({ baseUrl: h.server.url, token: ALICE });
    for (let i = 0; i < 3; i++) await api.createTask(spec(`t${i}`));
    // A key goes as the Idempotency-Key header: asked twice, one task.
    const keyed = { ...spec('t2'), key: 'only-once' };
    const [once, twice] = [await api.createTask(keyed), await api.createTask(keyed)];
    expect([once.replayed, twice.replayed, twice.taskId]).toEqual([false, true, once.taskId]);
    expect(h.board.calls.at(-1)?.args).toEqual([keyed]);
    await until(storeSub(c), () => cardsOf(c).length === 5, 'five cards');
    expect(cardsOf(c)).toEqual(byTask(h.board.cards('alice')));
    // Two runners: t1 and t2 hold them, t3, t4 and t5 wait in line.
    const queued = (id: string) => c.store.getSnapshot().context.cards[id]?.queued?.position;
    expect([queued('t3'), queued('t4'), queued('t5')]).toEqual([1, 2, 3]);
  });

  it('reconnects after a drop and subscribes to its window again, catching up on missed changes', async () => {
    h = await startHarness();
    const timers = new ManualTimers();
    const frames: ServerFrame['type'][] = [];
    client = connectBoard({
      url: h.server.wsUrl,
      token: ALICE,
      WebSocket: WS,
      timers,
      random: () => 0,
      onFrame: (f) => frames.push(f.type),
    });
    const c = client;
    await until(storeSub(c), () => c.store.getSnapshot().context.connection === 'live', 'live');
    c.drop();
    await until(storeSub(c), () => c.store.getSnapshot().context.connection === 'offline', 'drop');
    await h.board.createTask('alice', spec('while away'));
    await h.board.createTask('alice', spec('while away 2'));
    expect(timers.fireShortest()).toBe(250);
    await until(storeSub(c), () => cardsOf(c).length === 2, 'caught up');
    expect(frames.filter((f) => f === 'snapshot')).toEqual(['snapshot', 'snapshot']);
    expect(cardsOf(c)).toEqual(byTask(h.board.cards('alice')));
    expect(c.attempts).toBe(0);
  });

  it('backs off with growing delays while the server is down, and stops after close()', async () => {
    h = await startHarness();
    const url = h.server.wsUrl;
    await h.server.close();
    h = null;
    const timers = new ManualTimers();
    client = connectBoard({ url, token: ALICE, WebSocket: WS, timers, random: () => 0 });
    const c = client;
    const delays: number[] = [];
    for (let i = 0; i < 4; i++) {
      await until(storeSub(c), () => timers.size > 0, 'a retry');
      delays.push(timers.fireShortest());
    }
    expect(delays).toEqual([250, 500, 1000, 2000]);
    c.close();
    expect(c.store.getSnapshot().context.connection).toBe('closed');
  });

  it('gets a fresh snapshot from a restarted server (new epoch)', async () => {
    const board = new FakeBoard();
    const start = (port: number) =>
      createUiServer({
        source: board,
        commands: board,
        tokens: TOKENS,
        port,
        host: '127.0.0.1',
        logger: pino({ level: 'silent' }),
      });
    let server = await start(0);
    const port = server.port;
    const timers = new ManualTimers();
    const frames: ServerFrame['type'][] = [];
    client = connectBoard({
      url: server.wsUrl,
      token: ALICE,
      WebSocket: WS,
      timers,
      onFrame: (f) => frames.push(f.type),
    });
    const c = client;
    await until(storeSub(c), () => c.store.getSnapshot().context.connection === 'live', 'live');
    const epoch = c.store.getSnapshot().context.epoch;
    await server.close();
    await until(storeSub(c), () => c.store.getSnapshot().context.connection === 'offline', 'down');
    server = await start(port);
    await board.createTask('alice', spec('after restart'));
    timers.fireShortest();
    await until(storeSub(c), () => cardsOf(c).length === 1, 'snapshot after restart');
    expect(c.store.getSnapshot().context.epoch).not.toBe(epoch);
    expect(frames.filter((f) => f === 'snapshot')).toHaveLength(2);
    c.close();
    await server.close();
  });
});

describe('against a scripted socket', () => {
  const hello = { type: 'hello', v: 1, userId: 'alice', heartbeatMs: 1000 };
  const start = () => {
    const timers = new ManualTimers();
    client = connectBoard({
      url: 'ws://x/ws',
      token: ALICE,
      WebSocket: ScriptedSocket,
      timers,
    });
    const socket = ScriptedSocket.last!;
    return { c: client, socket, timers };
  };

  it('offers the board protocol and the token as subprotocols, and subscribes on hello', () => {
    const { socket } = start();
    expect(socket.protocols).toEqual(['roundtable.board.v1', `roundtable.bearer.${ALICE}`]);
    socket.deliver(hello);
    expect(socket.sent).toEqual([{ type: 'subscribe', v: 1, window: {} }]);
  });

  it('refuses a bad frame, applies updates, and subscribes again when the window changes', () => {
    const { c, socket } = start();
    socket.deliver(hello);
    const counts = { queued: 1, running: 0, done: 0, failed: 0 };
    socket.deliver({ type: 'snapshot', epoch: 'e', seq: 5, counts, users: ['alice'], cards: [] });
    socket.deliver({ type: 'update', seq: 7, cards: [{ bad: true }], removed: [] });
    expect(c.store.getSnapshot().context.lastError?.code).toBe('bad_server_frame');
    socket.deliver({ type: 'update', seq: 7, cards: [{ ...sampleCard }], removed: [] });
    expect(Object.keys(c.store.getSnapshot().context.cards)).toEqual(['t1']);
    const window = { filter: { text: 'x' } };
    c.setWindow(window);
    c.setWindow({ filter: { text: 'x' } });
    expect(socket.sent.slice(1)).toEqual([{ type: 'subscribe', v: 1, window }]);
    expect(c.window).toEqual(window);
  });

  it('takes a capped card and an update that flips its atCap alone', () => {
    const { c, socket } = start();
    socket.deliver(hello);
    const counts = { queued: 1, running: 0, done: 0, failed: 0 };
    const since = '2026-11-01T10:00:00.000Z';
    const capped = { ...sampleCard, queued: { position: 1, since, atCap: { running: 1, max: 1 } } };
    socket.deliver({ type: 'snapshot', epoch: 'e', seq: 5, counts, users: [], cards: [capped] });
    expect(c.store.getSnapshot().context.cards.t1?.queued?.atCap).toEqual({ running: 1, max: 1 });
    socket.deliver({ type: 'update', seq: 6, cards: [], atCap: { t1: null }, removed: [] });
    const { cards, lastError } = c.store.getSnapshot().context;
    expect([cards.t1?.queued, lastError]).toEqual([{ position: 1, since, atCap: null }, null]);
  });

  it('pings a quiet server and gives it up after two silent intervals', () => {
    const { socket, timers } = start();
    socket.deliver(hello);
    expect(timers.fireShortest()).toBe(1000);
    expect(socket.sent.at(-1)).toEqual({ type: 'ping', id: 'live' });
    expect(timers.fireShortest()).toBe(2000);
    expect(socket.closedWith).toBe(4000);
    expect(client?.store.getSnapshot().context.connection).toBe('offline');
  });
});

const sampleCard = queuedCard('t1', { title: 'x', sessionId: 's1' });
