/**
 * The board page's early socket: a few lines inlined in the page's HTML open
 * the board's WebSocket and subscribe to the first window while the page's
 * script is still loading and compiling, so the first snapshot is on its
 * way (or already here) when the client starts. The client then adopts that
 * socket (`connectBoard({ early })`) instead of opening its own.
 *
 * The inline script keeps every frame it receives until the client takes
 * the socket over: a frame handled by nobody would be lost (without the
 * snapshot the client never goes live).
 *
 * Imports nothing from `node:*`: the browser bundle includes this file.
 */
import type { BoardWindow } from '../board/boardWindow.js';
import type { EarlySocket } from './boardClient.js';

export type { EarlySocket };

/** Where the inline script leaves its `EarlySocket` on `window`. */
export const EARLY_SOCKET_KEY = 'roundtableEarlySocket';

/** Where the page keeps its token across reloads (the URL fragment is cleared once read). */
export const TOKEN_STORAGE_KEY = 'roundtable.token';

/** What the inline script needs of the board protocol, given by the server so both agree. */
export interface EarlySocketConfig {
  subprotocol: string;
  bearerPrefix: string;
  version: number;
  /** The window the page's columns ask for first. */
  window: BoardWindow;
}

/**
 * The inline script's source. It finds the token where the page does (the
 * fragment's `token=`, else sessionStorage) and does nothing without one.
 * It subscribes in the upgrade's URL (`/ws?subscribe=…`, served right after
 * the hello: docs/board-protocol.md), so the snapshot is on its way as the
 * socket opens, whether or not the page's main thread is free to send
 * anything then. It parses no frame (the client parses each once).
 *
 * @example
 * ```ts
 * const js = earlySocketScript({ subprotocol: 'p', bearerPrefix: 'b.', version: 1, window: {} })
 * js.includes('/ws?subscribe=') // => true
 * js.includes('roundtableEarlySocket') // => true
 * ```
 */
export function earlySocketScript(config: EarlySocketConfig): string {
  const subscribe = JSON.stringify({
    type: 'subscribe',
    v: config.version,
    window: config.window,
  });
  return `(() => {
const token = new URLSearchParams(location.hash.slice(1)).get('token') || sessionStorage.getItem(${JSON.stringify(TOKEN_STORAGE_KEY)});
if (!token) return;
const socket = new WebSocket((location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + ${JSON.stringify(`/ws?subscribe=${encodeURIComponent(subscribe)}`)}, [${JSON.stringify(config.subprotocol)}, ${JSON.stringify(config.bearerPrefix)} + token]);
const early = { socket, token, frames: [], subscribed: ${JSON.stringify(config.window)} };
socket.onmessage = (ev) => early.frames.push(ev.data);
window.${EARLY_SOCKET_KEY} = early;
})();`;
}

/**
 * Takes the page's early socket (once: a second call gets null), if it was
 * opened with `token`.
 */
export function takeEarlySocket(token: string): EarlySocket | null {
  const holder = globalThis as { [EARLY_SOCKET_KEY]?: EarlySocket };
  const early = holder[EARLY_SOCKET_KEY];
  delete holder[EARLY_SOCKET_KEY];
  if (early === undefined) return null;
  if (early.token === token) return early;
  early.socket.close(1000, 'not adopted');
  return null;
}
