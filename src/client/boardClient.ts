/**
 * The board client: connects, subscribes to its window (what the page shows:
 * src/board/boardWindow.ts), applies the server's updates to the read model,
 * and on any loss reconnects with backoff and subscribes to the window again
 * (a window's snapshot is small, so there is nothing to replay). Works in Node and the browser: it takes any WHATWG-style WebSocket
 * constructor (the browser's, or `ws`'s) and injectable timers.
 */

import type { ServerFrame } from '../board/boardProtocol.js';
import {
  BEARER_SUBPROTOCOL_PREFIX,
  PROTOCOL_VERSION,
  SUBPROTOCOL,
} from '../board/boardProtocolConstants.js';
import type { BoardWindow } from '../board/boardWindow.js';
import { readServerFrame } from '../board/serverFrameCheck.js';
import { type BackoffDelays, backoffDelay } from '../common/backoff.js';
import { type BoardStore, createBoardStore } from './boardStore.js';

/**
 * A handler property whose event the socket may describe more fully than
 * the client reads it: checked as a method is (bivariantly), so `ws`'s
 * `onmessage: (event: WebSocket.MessageEvent) => void` is one, as the
 * browser's is.
 */
type EventHandler<E> = { bivarianceHack(ev: E): void }['bivarianceHack'];

/** The subset of a WebSocket the client uses. */
export interface WebSocketLike {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  onopen: EventHandler<unknown> | null;
  onmessage: EventHandler<{ data: unknown }> | null;
  onclose: EventHandler<{ code: number; reason: string }> | null;
  onerror: EventHandler<unknown> | null;
}

/** What the inline script leaves for the client, by the page's inline script (src/client/earlySocket.ts). */
export interface EarlySocket {
  socket: WebSocketLike;
  /** The token it authenticated with: the client adopts it only for the same token. */
  token: string;
  /** Every frame's data received so far, oldest first; the client replays them. */
  frames: unknown[];
  /** The window it subscribed to (in its URL), or null if it did not. */
  subscribed: BoardWindow | null;
}

/** A WebSocket constructor: `globalThis.WebSocket` or `ws`'s `WebSocket`. */
export type WebSocketConstructor = new (url: string, protocols: string[]) => WebSocketLike;

/** Timers, injectable so tests drive reconnects without sleeping. */
export interface ClientTimers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** Options of {@link connectBoard}. */
export interface BoardClientOptions {
  /** `ws://host:port/ws` */
  url: string;
  token: string;
  WebSocket?: WebSocketConstructor;
  store?: BoardStore;
  /** Reconnect delays. Default {@link DEFAULT_BACKOFF}. */
  backoff?: BackoffDelays;
  timers?: ClientTimers;
  random?: () => number;
  /** The window to subscribe to; default the first 100 cards of each column, no filter. */
  window?: BoardWindow;
  /** Every valid frame, after the store has applied it (tests, debugging). */
  onFrame?: (frame: ServerFrame) => void;
  /**
   * A socket the page opened before the client loaded (src/client/earlySocket.ts),
   * used as the first connection instead of a new one; later ones are the client's.
   */
  early?: EarlySocket | null;
}

/** A connected board. */
export interface BoardClient {
  readonly store: BoardStore;
  /** Reconnect attempts since the last successful subscribe. */
  readonly attempts: number;
  /** The window it subscribes to. */
  readonly window: BoardWindow;
  /**
   * Shows another window (a filter, a page, a followed task): subscribes
   * with it now, and with it after every reconnect.
   */
  setWindow(window: BoardWindow): void;
  /** Drops the current socket (as a network failure would); the client reconnects and resumes. */
  drop(): void;
  /** Closes for good; no reconnect. */
  close(): void;
}

/**
 * The client's reconnect delays: 250 ms doubling to 10 s, each up to half
 * again longer at random, so a server restart does not get every client back
 * in the same millisecond.
 */
export const DEFAULT_BACKOFF: BackoffDelays = { minMs: 250, maxMs: 10_000, randomFactor: 0.5 };

const OPEN = 1;
const defaultTimers: ClientTimers = {
  setTimeout: (fn, ms) => globalThis.setTimeout(fn, ms),
  clearTimeout: (h) => globalThis.clearTimeout(h as ReturnType<typeof globalThis.setTimeout>),
};

/** Connects and keeps the board's read model current until `close()`. */
export function connectBoard(options: BoardClientOptions): BoardClient {
  const Ctor =
    options.WebSocket ??
    (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket ??
    missingWebSocket();
  const store = options.store ?? createBoardStore();
  const timers = options.timers ?? defaultTimers;
  const random = options.random ?? Math.random;
  const policy = options.backoff ?? DEFAULT_BACKOFF;
  let socket: WebSocketLike | null = null;
  let attempts = 0;
  let closed = false;
  let reconnectTimer: unknown = null;
  let pingTimer: unknown = null;
  let deadTimer: unknown = null;
  let heartbeatMs = 30_000;
  let window: BoardWindow = options.window ?? {};
  // The window last subscribed to on the current socket (null: none yet). The
  // client subscribes as its socket opens; the hello makes up for a subscribe
  // not sent by then (or for another window), so it is never asked twice.
  let subscribedTo: string | null = null;

  const send = (frame: object) => {
    if (socket?.readyState === OPEN) socket.send(JSON.stringify(frame));
  };
  const subscribe = () => {
    if (socket?.readyState !== OPEN) return;
    send({ type: 'subscribe', v: PROTOCOL_VERSION, window });
    subscribedTo = JSON.stringify(window);
  };
  const clearLiveness = () => {
    timers.clearTimeout(pingTimer);
    timers.clearTimeout(deadTimer);
  };
  // The browser cannot see protocol pings, so the client asks for a pong
  // itself; a server silent for two intervals is treated as gone.
  const armLiveness = () => {
    clearLiveness();
    pingTimer = timers.setTimeout(() => send({ type: 'ping', id: 'live' }), heartbeatMs);
    deadTimer = timers.setTimeout(() => socket?.close(4000, 'server silent'), 2 * heartbeatMs);
  };

  const receive = (raw: unknown) => {
    let frame: ServerFrame;
    try {
      frame = readServerFrame(JSON.parse(String(raw)));
    } catch (err) {
      store.trigger.error({ code: 'bad_server_frame', message: (err as Error).message });
      return;
    }
    armLiveness();
    switch (frame.type) {
      case 'hello':
        heartbeatMs = frame.heartbeatMs;
        store.trigger.hello({ userId: frame.userId });
        if (subscribedTo !== JSON.stringify(window)) subscribe();
        armLiveness();
        break;
      case 'snapshot':
        attempts = 0;
        store.trigger.snapshot(frame);
        break;
      case 'update':
        store.trigger.update(frame);
        break;
      case 'error':
        store.trigger.error(frame);
        break;
      case 'pong':
        break;
    }
    options.onFrame?.(frame);
  };

  const open = (early?: EarlySocket) => {
    reconnectTimer = null;
    if (closed) return;
    store.trigger.connection({ state: 'connecting' });
    const ws =
      early?.socket ??
      new Ctor(options.url, [SUBPROTOCOL, BEARER_SUBPROTOCOL_PREFIX + options.token]);
    socket = ws;
    subscribedTo = null;
    // Subscribed as it opens, unless it is an early socket subscribed already.
    ws.onopen = () => {
      if (socket === ws && subscribedTo === null) subscribe();
    };
    ws.onmessage = (ev) => {
      if (socket === ws) receive(ev.data);
    };
    ws.onerror = () => {
      // The close event follows and carries what we act on.
    };
    const onClose = () => {
      if (socket !== ws) return;
      socket = null;
      clearLiveness();
      if (closed) return;
      // The retry is scheduled before observers hear "offline", so they see it pending.
      reconnectTimer = timers.setTimeout(() => open(), backoffDelay(attempts, policy, random));
      attempts += 1;
      store.trigger.connection({ state: 'offline' });
    };
    ws.onclose = onClose;
    if (early === undefined) return;
    // What came before the handlers were set, in order; nothing can arrive
    // in between (this runs in one task). Open or not, the socket is taken as
    // it is: what the inline script subscribed to counts as subscribed.
    subscribedTo = early.subscribed === null ? null : JSON.stringify(early.subscribed);
    for (const data of early.frames.splice(0)) if (socket === ws) receive(data);
    // Closed before it was adopted: its close event went to nobody.
    if (ws.readyState > OPEN) onClose();
  };

  open(options.early ?? undefined);
  return {
    store,
    get attempts() {
      return attempts;
    },
    get window() {
      return window;
    },
    setWindow(next) {
      // The same window again (a re-render) is no new subscribe.
      if (JSON.stringify(next) === JSON.stringify(window)) return;
      window = next;
      subscribe();
    },
    drop() {
      socket?.close(4000, 'dropped by client');
    },
    close() {
      closed = true;
      clearLiveness();
      timers.clearTimeout(reconnectTimer);
      socket?.close(1000, 'client closed');
      socket = null;
      store.trigger.connection({ state: 'closed' });
    },
  };
}

function missingWebSocket(): never {
  throw new TypeError('connectBoard: no global WebSocket; pass options.WebSocket (e.g. from "ws")');
}
