/**
 * The limits of the UI server's own listener, on every TCP connection before
 * anyone is known: the WebSocket caps (connectionLimiter.ts) count only
 * authenticated sockets, so without these, clients that open connections
 * and send a request a byte at a time hold a file descriptor each until the
 * node has none left (every client refused, the admin's too, and the store
 * and the engine unable to open theirs).
 *
 * - a cap on open connections in all (`server.maxConnections`: beyond it
 *   Node closes a new connection as it accepts it);
 * - a cap per remote address well below it, so one address cannot take
 *   every place (refused with a 429 before any request is read);
 * - deadlines for a request to arrive: its headers, and the whole of it.
 *   Once a request has arrived they no longer apply, so a long answer, a
 *   download or a WebSocket is not cut.
 *
 * A board mounted on an app's server (mountUiServer.ts) has no listener:
 * the app gives its own server `httpServerOptions` and `capConnections`.
 */
import type { Server, ServerOptions } from 'node:http';
import type { Socket } from 'node:net';
import { AddressSlots, addressKey } from './addressSlots.js';
import { type OnRefusal, rejectUpgrade } from './listenerGuard.js';
import type { UiServerLimits, UiServerLogger } from './uiServerOptions.js';

/** The limits of `UI_SERVER_DEFAULTS` that only a listener can apply. */
export const LISTENER_LIMIT_KEYS = [
  'maxTcpConnections',
  'maxTcpConnectionsPerAddress',
  'headersTimeoutMs',
  'requestTimeoutMs',
] as const satisfies ReadonlyArray<keyof UiServerLimits>;

/** The listener's limits. */
export type ListenerLimits = Pick<UiServerLimits, (typeof LISTENER_LIMIT_KEYS)[number]>;

/** How often Node looks for requests past their deadline, at most. */
const MAX_CHECK_INTERVAL_MS = 1_000;

/**
 * The `http.createServer` options that apply the deadlines. Node looks for
 * requests past them only every `connectionsCheckingInterval` (30 s by
 * default, which would stretch a 10 s headers deadline to 40 s), so it
 * looks every tenth of the shorter deadline, at most every second.
 *
 * @example
 * ```ts
 * const limits = { maxTcpConnections: 12000, maxTcpConnectionsPerAddress: 256, headersTimeoutMs: 10000, requestTimeoutMs: 30000 }
 * httpServerOptions(limits) // => { headersTimeout: 10000, requestTimeout: 30000, connectionsCheckingInterval: 1000 }
 * httpServerOptions({ ...limits, headersTimeoutMs: 200, requestTimeoutMs: 400 }).connectionsCheckingInterval // => 20
 * httpServerOptions({ ...limits, headersTimeoutMs: 5, requestTimeoutMs: 5 }).connectionsCheckingInterval // => 1
 * ```
 */
export function httpServerOptions(
  limits: ListenerLimits,
): Required<
  Pick<ServerOptions, 'headersTimeout' | 'requestTimeout' | 'connectionsCheckingInterval'>
> {
  const shorter = Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs);
  return {
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    connectionsCheckingInterval: Math.max(
      1,
      Math.min(MAX_CHECK_INTERVAL_MS, Math.floor(shorter / 10)),
    ),
  };
}

/** The code a connection over its address's cap is refused with (429), as for WebSockets. */
export const ADDRESS_REFUSAL = 'too_many_address_connections';

/** The code counted for a connection Node closed at the total cap (it gets no answer). */
export const TOTAL_REFUSAL = 'too_many_connections';

/**
 * What a connection whose request could not be read is answered, by Node's
 * error code: the statuses Node answers itself, with the board's JSON body.
 * Null for an error that leaves nothing to answer: the peer reset the
 * connection, or ended it in the middle of a request.
 *
 * @example
 * ```ts
 * clientErrorAnswer('ERR_HTTP_REQUEST_TIMEOUT') // => { status: 408, code: 'request_timeout', message: 'the request did not arrive in time' }
 * clientErrorAnswer('HPE_HEADER_OVERFLOW')?.status // => 431
 * clientErrorAnswer('HPE_INVALID_METHOD')?.code // => 'bad_request'
 * clientErrorAnswer('ECONNRESET') // => null
 * clientErrorAnswer('HPE_INVALID_EOF_STATE') // => null
 * ```
 */
export function clientErrorAnswer(
  errorCode: string | undefined,
): { status: number; code: string; message: string } | null {
  switch (errorCode) {
    case 'ECONNRESET':
    case 'EPIPE':
    case 'HPE_INVALID_EOF_STATE':
      return null;
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return {
        status: 408,
        code: 'request_timeout',
        message: 'the request did not arrive in time',
      };
    case 'HPE_HEADER_OVERFLOW':
      return {
        status: 431,
        code: 'headers_too_large',
        message: 'the request headers are too large',
      };
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return { status: 413, code: 'too_large', message: 'the chunk extensions are too large' };
    default:
      return { status: 400, code: 'bad_request', message: 'the request could not be read' };
  }
}

/**
 * Caps the connections of `server` (made with {@link httpServerOptions}):
 * `maxTcpConnections` in all, `maxTcpConnectionsPerAddress` per remote
 * address. Call it before the server listens. A refusal is logged once per
 * address until that address is admitted again, and the total cap once per
 * run of drops, so a flood does not flood the log too.
 */
export function capConnections(
  server: Server,
  limits: ListenerLimits,
  logger: Pick<UiServerLogger, 'warn'>,
  onRefusal: OnRefusal = () => {},
): void {
  server.maxConnections = limits.maxTcpConnections;
  const slots = new AddressSlots(limits.maxTcpConnectionsPerAddress);
  const warned = new Set<string>();
  let dropping = false;
  // Node answers a request past its deadline (408) or one it cannot parse
  // itself, unheard; listening takes that answer over, so it is written
  // here as Node writes it (never into a response already started).
  server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
    const answer = clientErrorAnswer(err.code);
    const inFlight = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (answer === null || !socket.writable || inFlight?.headersSent === true) {
      socket.destroy();
      return;
    }
    onRefusal(answer.code);
    rejectUpgrade(socket, answer.status, answer.code, answer.message);
  });
  server.on('drop', (dropped?: { remoteAddress?: string }) => {
    onRefusal(TOTAL_REFUSAL);
    if (dropping) return;
    dropping = true;
    logger.warn(
      { maxTcpConnections: limits.maxTcpConnections, remoteAddress: dropped?.remoteAddress },
      'ui-server: every connection place is taken; new connections are closed',
    );
  });
  // Prepended, so a refused socket is answered before HTTP reads from it:
  // the short reply is flushed and the socket destroyed before the next read.
  server.prependListener('connection', (socket: Socket) => {
    dropping = false;
    const key = addressKey(socket.remoteAddress);
    const release = slots.take(key);
    if (release === null) {
      if (!warned.has(key)) {
        warned.add(key);
        logger.warn(
          { remoteAddress: key, maxTcpConnectionsPerAddress: limits.maxTcpConnectionsPerAddress },
          'ui-server: an address holds all its connections; more from it are refused',
        );
      }
      onRefusal(ADDRESS_REFUSAL);
      rejectUpgrade(
        socket,
        429,
        ADDRESS_REFUSAL,
        `this address has ${limits.maxTcpConnectionsPerAddress} connections open`,
      );
      return;
    }
    warned.delete(key);
    socket.once('close', release);
  });
}
