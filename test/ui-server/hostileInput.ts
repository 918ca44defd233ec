/**
 * Hostile HTTP input for the listener tests, in-process and against a real
 * node: raw bytes written on a TCP socket (no client library would send
 * them), and what came back.
 */
import { connect } from 'node:net';

/** What a raw exchange got: the status of the first response line (null if none) and the text. */
export interface RawAnswer {
  status: number | null;
  text: string;
}

/**
 * Writes `bytes` (a string is sent as latin1, byte for byte) and reads until
 * the server closes or `ms` pass; then the socket is destroyed.
 */
export function rawExchange(port: number, bytes: string | Buffer, ms = 2000): Promise<RawAnswer> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      const text = Buffer.concat(chunks).toString('latin1');
      const match = /^HTTP\/1\.[01] (\d{3})/.exec(text);
      resolve({ status: match ? Number(match[1]) : null, text });
    };
    const timer = setTimeout(finish, ms);
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', finish);
    socket.on('close', finish);
    socket.write(typeof bytes === 'string' ? Buffer.from(bytes, 'latin1') : bytes);
  });
}

/** The JSON error body of a raw answer, if it has one. */
export function errorCodeOf(answer: RawAnswer): string | null {
  const body = answer.text.slice(answer.text.indexOf('\r\n\r\n') + 4);
  try {
    return (JSON.parse(body) as { error?: { code?: string } }).error?.code ?? null;
  } catch {
    return null;
  }
}

const UPGRADE =
  'Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n' +
  'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n';

/**
 * Request targets Node's parser accepts and `new URL()` refuses (issue 14,
 * item 1): absolute forms whose host or port is not one.
 */
export const BAD_TARGETS = ['http://[::1', 'http://a:99999/ws', 'http://%zz/'];

/**
 * Paths that start with `//`: read relative to a base, their first segment
 * would be a host (`//[` one that does not parse, `//api/pool` the host
 * `api`). Each is a path, answered like any other unknown path.
 */
export const SLASHED_PATHS = ['//[', '//a:99999/', '//%zz/', '//api/pool', '//ws'];

const requestsFor = (targets: readonly string[]) =>
  targets.flatMap((t) => [
    { name: `GET ${t}`, bytes: `GET ${t} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n` },
    { name: `upgrade ${t}`, bytes: `GET ${t} HTTP/1.1\r\nHost: x\r\n${UPGRADE}\r\n` },
  ]);

/** One request line per bad target, as a plain GET and as an upgrade. */
export function badTargetRequests(): Array<{ name: string; bytes: string }> {
  return requestsFor(BAD_TARGETS);
}

/** One request line per path that starts with `//`, as a plain GET and as an upgrade. */
export function slashedPathRequests(): Array<{ name: string; bytes: string }> {
  return requestsFor(SLASHED_PATHS);
}

/**
 * Malformed headers and bodies, each answered by someone (Node's parser, the
 * guard, the API, ws) or cut; none may end the process.
 */
export function malformedRequests(token: string): Array<{ name: string; bytes: string }> {
  const post = (headers: string, body: string) =>
    `POST /api/tasks HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\n${headers}\r\n${body}`;
  return [
    { name: 'garbage line', bytes: '\u0000\u00ff\r\n\r\n' },
    { name: 'no version', bytes: 'GET /\r\n\r\n' },
    { name: 'header without colon', bytes: 'GET /healthz HTTP/1.1\r\nHost x\r\n\r\n' },
    { name: 'control char in header', bytes: 'GET / HTTP/1.1\r\nHost: x\r\nX-A: a\u0001b\r\n\r\n' },
    {
      name: 'huge header',
      bytes: `GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(70_000)}\r\n\r\n`,
    },
    {
      name: 'two content-lengths',
      bytes: post('Content-Length: 2\r\nContent-Length: 3\r\n', '{}'),
    },
    {
      name: 'bad chunk size',
      bytes: post('Transfer-Encoding: chunked\r\n', 'zz\r\n{}\r\n0\r\n\r\n'),
    },
    { name: 'truncated body', bytes: post('Content-Length: 100\r\n', '{"title":') },
    { name: 'body not JSON', bytes: post('Content-Length: 5\r\n', '{{{{{') },
    { name: 'oversized body', bytes: post(`Content-Length: ${200_000}\r\n`, 'x'.repeat(200_000)) },
    {
      name: 'bearer of latin1',
      bytes: 'GET /api/pool HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \u00e9\u00e9\r\n\r\n',
    },
    {
      name: 'upgrade, no key',
      bytes: `GET /ws HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n`,
    },
    {
      name: 'upgrade, version 99',
      bytes: `GET /ws HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\n${UPGRADE.replace('13', '99')}\r\n`,
    },
    {
      name: 'upgrade with trailing garbage',
      bytes: `GET /ws HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\n${UPGRADE}\r\n\u0088\u0080garbage`,
    },
    {
      name: 'inspector upgrade, bad target',
      bytes: `GET http://[::1/inspect/ws HTTP/1.1\r\nHost: x\r\n${UPGRADE}\r\n`,
    },
    {
      name: 'exit api, bad body',
      bytes: 'POST /inspect/api/exit HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\n{{{',
    },
  ];
}
