/// <reference lib="dom" />
/**
 * The inspector page's connection to its topic: the admin token travels as
 * a WebSocket subprotocol (never in a URL), every frame is parsed and handed
 * on, and any close is followed by a new connection after the project's one
 * backoff (src/common/backoff.ts), reset once a connection opens. 1006 right
 * away is how a browser reports a refused upgrade (401/403): that retries
 * too, more slowly each time.
 */
import { type BackoffDelays, backoffDelay } from '../../../common/backoff.js';
import {
  BEARER_SUBPROTOCOL_PREFIX,
  INSPECT_SUBPROTOCOL,
  INSPECT_WS_PATH,
  type InspectServerFrame,
} from '../inspectorProtocol.js';

/** From half a second, doubling, to 30 s between attempts. */
export const RECONNECT_DELAYS: BackoffDelays = { minMs: 500, maxMs: 30_000 };

/** What the page does at each turn of the connection. */
export interface InspectSocketHandlers {
  /** A socket was created (not open yet): the one the page sends on. */
  created(ws: WebSocket): void;
  open(ws: WebSocket): void;
  frame(f: InspectServerFrame): void;
  /** The socket closed with `code`; the next attempt starts in `retryInMs`. */
  closed(code: number, retryInMs: number): void;
}

/** Connects to the inspector topic of this page's host, and keeps connecting. */
export function connectInspector(token: string, on: InspectSocketHandlers, attempt = 0): void {
  const url = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}${INSPECT_WS_PATH}`;
  const ws = new WebSocket(url, [INSPECT_SUBPROTOCOL, `${BEARER_SUBPROTOCOL_PREFIX}${token}`]);
  on.created(ws);
  ws.onopen = () => {
    attempt = 0;
    on.open(ws);
  };
  ws.onmessage = (m) => on.frame(JSON.parse(String(m.data)) as InspectServerFrame);
  ws.onclose = (e) => {
    const delay = backoffDelay(attempt, RECONNECT_DELAYS);
    on.closed(e.code, delay);
    setTimeout(() => connectInspector(token, on, attempt + 1), delay);
  };
}
