/**
 * Network listeners never throw. An exception that leaves an http `request`
 * or `upgrade` listener is an uncaught exception and ends the process, so one
 * malformed request line from anyone, authenticated or not, would stop the
 * node. Every listener of the UI server is wrapped here: a typed
 * {@link UiRequestError} becomes its status and code, anything else a logged
 * `internal` 500, and a response that already started is cut instead.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';

/**
 * A refusal with an HTTP status and a stable code, answered as `{ error: {
 * code, message } }`: the one error class of every UI server boundary (this
 * guard, the upgrade ladder, the board's HTTP API, the inspector's exit API),
 * told apart by `instanceof`. `headers` go out with the answer where the
 * refusal needs them (`allow` on a 405, `www-authenticate` on a 401).
 *
 * @example
 * ```ts
 * const e = new UiRequestError(405, 'method_not_allowed', 'use POST', { headers: { allow: 'POST' } })
 * [e.status, e.code, e.message, e.headers.allow] // => [405, 'method_not_allowed', 'use POST', 'POST']
 * new UiRequestError(400, 'bad_target', 'no path').headers // => {}
 * ```
 */
export class UiRequestError<C extends string = string> extends Error {
  override readonly name: string = 'UiRequestError';
  readonly headers: Readonly<Record<string, string>>;
  constructor(
    readonly status: number,
    readonly code: C,
    message: string,
    options?: { cause?: unknown; headers?: Record<string, string> },
  ) {
    super(message, options);
    this.headers = options?.headers ?? {};
  }
}

/** Stable codes of the refusals the guard and the upgrade ladder answer with. */
export const GUARD_CODES = {
  /** The request target is neither a path nor a URL (`http://[::1`, `http://a:99999/`). */
  badTarget: 'bad_target',
  /** A listener failed; the details are in the log, never in the answer. */
  internal: 'internal',
} as const;

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  408: 'Request Timeout',
  413: 'Payload Too Large',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

/** The part of a logger the guard writes to. */
export interface GuardLogger {
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** Where a target that is a path is read from; only its path and query are kept. */
const ORIGIN = 'http://localhost';

/**
 * The request target as a URL, or a 400 `bad_target`. A target that starts
 * with `/` is a path, so it is read after an origin: relative to a base,
 * `new URL('//api/pool', base)` would take `api` for a host and `/pool` for
 * the path. Any other target (the absolute form, `http://host/path`) is read
 * as a URL; Node's parser accepts some that `new URL` refuses, so the parse
 * error must become an answer.
 *
 * @example
 * ```ts
 * requestUrl({ url: '//api/pool?x=1' }).searchParams.get('x') // => '1'
 * requestUrl({ url: 'http://other:8080/ws?subscribe=a' }).pathname // => '/ws'
 * requestUrl({ url: 'http://[::1' }) // throws UiRequestError
 * ```
 */
export function requestUrl(req: Pick<IncomingMessage, 'url'>): URL {
  const target = req.url ?? '/';
  try {
    return target.startsWith('/') ? new URL(`${ORIGIN}${target}`) : new URL(target, ORIGIN);
  } catch (err) {
    throw new UiRequestError(400, GUARD_CODES.badTarget, 'the request target is not a URL path', {
      cause: err,
    });
  }
}

/**
 * The path of a request target (see {@link requestUrl}), or a 400 `bad_target`.
 *
 * @example
 * ```ts
 * requestPath({ url: '/ws?x=1' }) // => '/ws'
 * requestPath({ url: '//api/pool' }) // => '//api/pool'
 * requestPath({ url: '//[' }) // => '//['
 * requestPath({ url: 'http://a:99999/ws' }) // throws UiRequestError
 * ```
 */
export function requestPath(req: Pick<IncomingMessage, 'url'>): string {
  return requestUrl(req).pathname;
}

/**
 * Refuses an upgrade: a status line and a JSON body written before the socket
 * is destroyed, so the client learns why and never becomes a WebSocket.
 * Extra headers (e.g. `Retry-After`) go before the body.
 */
export function rejectUpgrade(
  socket: Duplex,
  status: number,
  code: string,
  message: string,
  headers: Record<string, string> = {},
): void {
  if (socket.destroyed || !socket.writable) {
    socket.destroy();
    return;
  }
  const body = JSON.stringify({ error: { code, message } });
  const extra = Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  socket.once('finish', () => socket.destroy());
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_TEXT[status] ?? 'Error'}\r\n` +
      `Connection: close\r\nContent-Type: application/json\r\n${extra}` +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}

const INTERNAL = { status: 500, code: GUARD_CODES.internal, message: 'internal error' } as const;

function answerOf(err: unknown): { status: number; code: string; message: string } | null {
  if (err instanceof UiRequestError)
    return { status: err.status, code: err.code, message: err.message };
  return null;
}

type RequestListener = (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;
type UpgradeListener = (req: IncomingMessage, socket: Duplex, head: Buffer) => void | Promise<void>;

/** Hears each refusal's code as it is answered (the board's `/metrics` count them). */
export type OnRefusal = (code: string) => void;

const ignore: OnRefusal = () => {};

/** Wraps a request listener: it answers on any exception, sync or async, and never throws. */
export function guardRequest(
  handler: RequestListener,
  logger: GuardLogger,
  onRefusal: OnRefusal = ignore,
): RequestListener {
  const fail = (req: IncomingMessage, res: ServerResponse, err: unknown) => {
    try {
      const known = answerOf(err);
      if (known === null) logger.error({ err, url: req.url }, 'http: listener failed');
      onRefusal((known ?? INTERNAL).code);
      if (res.headersSent || res.destroyed) {
        res.destroy();
        return;
      }
      const { status, code, message } = known ?? INTERNAL;
      const body = JSON.stringify({ error: { code, message } });
      res.writeHead(status, {
        'content-type': 'application/json; charset=utf-8',
        'cache-control': 'no-store',
        'content-length': String(Buffer.byteLength(body)),
        connection: 'close',
      });
      res.end(body);
    } catch (again) {
      // Even the answer failed (a socket gone mid-write): cut the connection.
      logger.error({ err: again }, 'http: could not answer a failed request');
      res.destroy();
    }
  };
  return (req, res) => {
    try {
      const pending = handler(req, res);
      if (pending instanceof Promise) pending.catch((err: unknown) => fail(req, res, err));
    } catch (err) {
      fail(req, res, err);
    }
  };
}

/**
 * Wraps an upgrade listener: it refuses through {@link rejectUpgrade} on any
 * exception and never throws. Once the 101 went out the socket carries
 * WebSocket frames, so a late failure destroys it instead of writing HTTP.
 */
export function guardUpgrade(
  handler: UpgradeListener,
  logger: GuardLogger,
  onRefusal: OnRefusal = ignore,
): UpgradeListener {
  const fail = (req: IncomingMessage, socket: Duplex, err: unknown) => {
    const known = answerOf(err);
    if (known === null) logger.error({ err, url: req.url }, 'upgrade: listener failed');
    onRefusal((known ?? INTERNAL).code);
    const started = (socket as { bytesWritten?: number }).bytesWritten ?? 0;
    if (started > 0) {
      socket.destroy();
      return;
    }
    const { status, code, message } = known ?? INTERNAL;
    try {
      rejectUpgrade(socket, status, code, message);
    } catch (again) {
      logger.error({ err: again }, 'upgrade: could not refuse a failed upgrade');
      socket.destroy();
    }
  };
  return (req, socket, head) => {
    // Before anything else: an error event with no listener would throw too.
    socket.on('error', (err) => logger.warn({ err }, 'upgrade socket error'));
    try {
      const pending = handler(req, socket, head);
      if (pending instanceof Promise) pending.catch((err: unknown) => fail(req, socket, err));
    } catch (err) {
      fail(req, socket, err);
    }
  };
}
