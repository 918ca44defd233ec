import { afterEach, describe, expect, it } from 'vitest';
import { type BoardClient, connectBoard } from '../../src/client/boardClient.js';
import { firstWindow } from '../../src/client/boardQuery.js';
import * as mod from '../../src/client/earlySocket.js';
import {
  EARLY_SOCKET_KEY,
  type EarlySocket,
  earlySocketScript,
  takeEarlySocket,
} from '../../src/client/earlySocket.js';
import { runDocExamples } from '../support/docExamples.js';
import { ALICE } from '../ui-server/wsHarness.js';
import { ManualTimers, queuedCard, ScriptedSocket } from './clientHarness.js';

runDocExamples(new URL('../../src/client/earlySocket.ts', import.meta.url), mod);

const hello = { type: 'hello', v: 1, userId: 'alice', heartbeatMs: 1000 };
const counts = { queued: 1, running: 0, done: 0, failed: 0 };
const card = queuedCard('t1');
const snapshot = { type: 'snapshot', epoch: 'e', seq: 3, counts, users: ['alice'], cards: [card] };

/** Runs the inline script's source with a scripted socket and the given fragment and storage. */
function runInline(hash: string, stored: string | null) {
  const holder: Record<string, unknown> = {};
  ScriptedSocket.last = null;
  new Function('window', 'location', 'sessionStorage', 'WebSocket', earlySocketScript(CONFIG))(
    holder,
    { hash, protocol: 'http:', host: 'h:1' },
    { getItem: () => stored },
    ScriptedSocket,
  );
  return {
    early: holder[EARLY_SOCKET_KEY] as EarlySocket | undefined,
    // Set by the script's `new WebSocket`, which the compiler cannot see.
    socket: ScriptedSocket.last as ScriptedSocket | null,
  };
}
const CONFIG = {
  subprotocol: 'roundtable.board.v1',
  bearerPrefix: 'roundtable.bearer.',
  version: 1,
  window: firstWindow(),
};

describe('the inline script', () => {
  it('opens the socket with the fragment’s token, subscribed in its URL, and keeps every frame', () => {
    const { early, socket } = runInline(`#token=${ALICE}`, 'other');
    const url = new URL(socket!.url);
    expect(url.href.replace(url.search, '')).toBe('ws://h:1/ws');
    expect(JSON.parse(url.searchParams.get('subscribe')!)).toEqual({
      type: 'subscribe',
      v: 1,
      window: firstWindow(),
    });
    expect(socket?.protocols).toEqual(['roundtable.board.v1', `roundtable.bearer.${ALICE}`]);
    expect(early?.token).toBe(ALICE);
    expect(early?.subscribed).toEqual(firstWindow());
    socket!.deliver(hello);
    socket!.deliver(snapshot);
    expect(socket!.sent).toEqual([]);
    expect(early?.frames.map((f) => JSON.parse(String(f)).type)).toEqual(['hello', 'snapshot']);
  });

  it('falls back on the stored token, and does nothing without one', () => {
    expect(runInline('#/jobs/t1', 'stored-token').early?.token).toBe('stored-token');
    const none = runInline('', null);
    expect(none.early).toBeUndefined();
    expect(none.socket).toBeNull();
  });
});

describe('a client adopting the early socket', () => {
  let client: BoardClient | null = null;
  afterEach(() => {
    client?.close();
    client = null;
  });

  const SCRIPTED = { url: 'ws://h/ws', token: ALICE, WebSocket: ScriptedSocket };
  const adopt = (early: EarlySocket, window = firstWindow()) => {
    const timers = new ManualTimers();
    client = connectBoard({ ...SCRIPTED, timers, window, early });
    return { c: client, timers };
  };
  const earlyWith = (frames: object[], subscribed: EarlySocket['subscribed']) => {
    const socket = new ScriptedSocket('ws://h/ws', []);
    const early: EarlySocket = {
      socket,
      token: ALICE,
      frames: frames.map((f) => JSON.stringify(f)),
      subscribed,
    };
    return { socket, early };
  };

  it('replays what came before it took over, goes live, and subscribes no second time', () => {
    const { socket, early } = earlyWith([hello, snapshot], firstWindow());
    const { c } = adopt(early);
    const ctx = c.store.getSnapshot().context;
    expect(ctx.connection).toBe('live');
    expect(ctx.userId).toBe('alice');
    expect(Object.keys(ctx.cards)).toEqual(['t1']);
    expect(socket.sent).toEqual([]);
    expect(early.frames).toEqual([]);
    expect(ScriptedSocket.last).toBe(socket); // no socket of its own
  });

  it('takes over the inline script’s socket still connecting: subscribed already, nothing is sent', () => {
    const { socket, early } = runInline(`#token=${ALICE}`, null);
    const { c } = adopt(early!);
    socket!.onopen?.({});
    socket!.deliver(hello);
    expect(socket!.sent).toEqual([]);
    socket!.deliver(snapshot);
    expect(c.store.getSnapshot().context.connection).toBe('live');
  });

  it('subscribes a socket it took over unsubscribed as it opens, once, with its window', () => {
    const { socket, early } = earlyWith([], null);
    const window = { ...firstWindow(), filter: { text: 'x' } };
    const { c } = adopt(early, window);
    socket.onopen?.({});
    expect(socket.sent).toEqual([{ type: 'subscribe', v: 1, window }]);
    socket.deliver(hello);
    expect(socket.sent).toHaveLength(1);
    socket.deliver(snapshot);
    expect(c.store.getSnapshot().context.connection).toBe('live');
  });

  it('handles a hello that comes after it took over an open socket', () => {
    const { socket, early } = earlyWith([], null);
    const { c } = adopt(early);
    socket.deliver(hello);
    expect(socket.sent).toEqual([{ type: 'subscribe', v: 1, window: firstWindow() }]);
    socket.deliver(snapshot);
    expect(c.store.getSnapshot().context.connection).toBe('live');
  });

  it('subscribes to its own window when the early one was another', () => {
    const { socket, early } = earlyWith([hello], { filter: { text: 'x' } });
    adopt(early);
    expect(socket.sent).toEqual([{ type: 'subscribe', v: 1, window: firstWindow() }]);
  });

  it('reconnects with a socket of its own when the early one closed before it took over', () => {
    const { socket, early } = earlyWith([hello], firstWindow());
    socket.readyState = 3;
    const { c, timers } = adopt(early);
    expect(c.store.getSnapshot().context.connection).toBe('offline');
    timers.fireShortest();
    const own = ScriptedSocket.last!;
    expect(own).not.toBe(socket);
    own.deliver(hello);
    expect(own.sent).toEqual([{ type: 'subscribe', v: 1, window: firstWindow() }]);
  });

  it('is taken once, and only for the token it was opened with', () => {
    const holder = globalThis as Record<string, unknown>;
    const { early } = earlyWith([], null);
    holder[EARLY_SOCKET_KEY] = early;
    expect(takeEarlySocket(ALICE)).toBe(early);
    expect(takeEarlySocket(ALICE)).toBeNull();
    const other = earlyWith([], null);
    holder[EARLY_SOCKET_KEY] = other.early;
    expect(takeEarlySocket('another-token')).toBeNull();
    expect(other.socket.closedWith).toBe(1000);
  });
});
