/**
 * The UI server's options: one defaults object for every limit, validated
 * before anything starts. Unknown keys are rejected with a "did you mean".
 */
import { z } from 'zod';
import type { BoardCommands, BoardSource } from '../board/boardPort.js';
import { refuseProtoKey } from '../board/protoKey.js';
import { didYouMean } from '../common/didYouMean.js';
import { firstIssue } from '../common/firstIssue.js';

/** Every limit of the server, with its default. Documented in docs/board-protocol.md. */
export const UI_SERVER_DEFAULTS = {
  /** Largest inbound WebSocket frame; larger ones close the socket with 1009. */
  maxPayload: 64 * 1024,
  /** Largest HTTP request body. */
  maxHttpBody: 64 * 1024,
  /** Ping interval; a client that missed the previous ping's pong is dropped. */
  heartbeatMs: 30_000,
  /** Frames a client may send at once before it is rate limited. */
  floodBurst: 40,
  /** Steady frames per second a client may send. */
  floodPerSecond: 10,
  /** Frames dropped for flooding, in a row, before the socket is closed with 4029. */
  floodStrikes: 20,
  /** Bytes queued to one socket before it counts as a dead slow consumer and is terminated. */
  maxBufferedBytes: 8 * 1024 * 1024,
  /**
   * Bytes queued, summed over one user's sockets (the admin's apart): over it,
   * that user's slowest sockets are closed with 4008 until it fits, so many
   * stalled readers cannot pin memory each under `maxBufferedBytes`.
   */
  maxUserBufferedBytes: 16 * 1024 * 1024,
  /** How long a socket closed with 4008 may take to read its close frame before it is cut. */
  slowCloseGraceMs: 1000,
  /**
   * When the server closes, how long a socket (the board's and the
   * inspector's) may take to answer its 1001 close frame before it is cut.
   * ws itself waits 30 s, and a client that never answers (a laptop asleep
   * with the board open, a cut network, a hostile client) held a node's
   * stop until its `shutdownMs` ended the process (exit 6).
   */
  closeGraceMs: 1000,
  /** Open user WebSocket connections in all (the admin's are counted apart); the next upgrade gets 503. */
  maxConnections: 10_000,
  /** Open sockets of one user; the next upgrade gets 429 `too_many_user_connections`. */
  maxConnectionsPerUser: 50,
  /** Open user sockets from one remote address; the next gets 429 `too_many_address_connections`. */
  maxConnectionsPerAddress: 200,
  /** Open admin sockets (never counted under the caps above); the next gets 429. */
  maxAdminConnections: 20,
  /**
   * Subscribes one user may send at once, over all their sockets (each one
   * costs a window's snapshot, and a new filter a pass over the view's
   * cards); beyond it a subscribe waits for the budget.
   */
  subscribeBurst: 10,
  /** Steady subscribes per second one user may send, over all their sockets. */
  subscribePerSecond: 2,
  /**
   * Output reads (a page or a download of a stored output) one user may have
   * in flight, the admin counted as one user; the next gets 429
   * `too_many_output_reads` (src/ui-server/outputReadGate.ts).
   */
  maxOutputReadsPerUser: 2,
  /**
   * Open TCP connections to the listener in all, of every kind (requests
   * still arriving, idle keep-alives, WebSockets); beyond it a new one is
   * closed as it is accepted. Above the WebSocket caps, and well under the
   * process's open-file limit, so the store, the engine and the logs always
   * have descriptors left.
   */
  maxTcpConnections: 12_000,
  /**
   * Open TCP connections from one remote address; the next is answered 429
   * `too_many_address_connections` and closed. Below `maxTcpConnections`, so
   * one address cannot take every place.
   */
  maxTcpConnectionsPerAddress: 256,
  /**
   * How long a client may take to send a request's headers, counted from
   * the connection's start (or the previous answer's end); then 408 and
   * closed, so a client trickling headers cannot hold a connection for long.
   */
  headersTimeoutMs: 10_000,
  /**
   * How long a client may take to send a whole request, body included; at
   * least `headersTimeoutMs`. Answers, downloads and WebSockets are not
   * bounded by it.
   */
  requestTimeoutMs: 30_000,
} as const;

/** The server's limits; every field optional in the options. */
export type UiServerLimits = { -readonly [K in keyof typeof UI_SERVER_DEFAULTS]: number };

/**
 * The clock the server reads; injected so tests drive the heartbeat, the
 * flood and subscribe budgets and the slow-consumer grace.
 */
export interface UiServerClock {
  now(): number;
  setInterval(fn: () => void, ms: number): unknown;
  clearInterval(handle: unknown): void;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** The real clock. Its timers never keep a process alive on their own. */
export const systemClock: UiServerClock = {
  now: () => Date.now(),
  setInterval: (fn, ms) => setInterval(fn, ms),
  clearInterval: (handle) => clearInterval(handle as ReturnType<typeof setInterval>),
  setTimeout: (fn, ms) => setTimeout(fn, ms).unref(),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/** The part of a pino logger the server uses. */
export interface UiServerLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/**
 * Bearer tokens: each user id maps to its token (the shape of the CLI's
 * `tokens.users` and of `.roundtable/tokens.json`); the admin token sees every user.
 */
export interface UiServerTokens {
  users: Record<string, string>;
  admin: string;
}

/** What `createUiServer` takes. */
export interface UiServerOptions {
  source: BoardSource;
  commands: BoardCommands;
  tokens: UiServerTokens;
  /** 0 picks a free port. */
  port: number;
  host: string;
  clock?: UiServerClock;
  limits?: Partial<UiServerLimits>;
  logger?: UiServerLogger;
}

/** Options after validation, with every default applied. */
export interface ResolvedUiServerOptions extends Required<Omit<UiServerOptions, 'limits'>> {
  limits: UiServerLimits;
}

/** A bad option, named by its dotted path. */
export class UiServerConfigError extends Error {
  override readonly name = 'UiServerConfigError';
  readonly code = 'UI_CONFIG';
  constructor(
    readonly field: string,
    problem: string,
  ) {
    super(`invalid ui-server option ${field}: ${problem}`);
  }
}

const OPTION_KEYS = ['source', 'commands', 'tokens', 'port', 'host', 'clock', 'limits', 'logger'];
const LIMIT_KEYS = Object.keys(UI_SERVER_DEFAULTS);
// Tokens travel in a WebSocket subprotocol for browsers, so they must be HTTP token characters.
const token = z.string().regex(/^[A-Za-z0-9._~-]{16,256}$/, '16 to 256 of A-Z a-z 0-9 . _ ~ -');

const shape = z.object({
  tokens: z.object({
    // A user id `__proto__` (a JSON-parsed config's own key) would pass
    // zod's record unseen and then be a user of the board: refused by name.
    users: z.preprocess(
      refuseProtoKey('is not a user id a token can be given to'),
      z.record(z.string().min(1).max(200), token),
    ),
    admin: token,
  }),
  port: z.number().int().min(0).max(65_535),
  host: z.string().min(1),
  limits: z.object(
    Object.fromEntries(LIMIT_KEYS.map((k) => [k, z.number().int().positive().optional()])),
  ),
});

function rejectUnknown(value: object, known: string[], path: string): void {
  for (const key of Object.keys(value)) {
    if (known.includes(key)) continue;
    const guess = didYouMean(key, known);
    throw new UiServerConfigError(
      `${path}${key}`,
      guess ? `unknown option, did you mean "${guess}"?` : 'unknown option',
    );
  }
}

function hasMethods(value: unknown, methods: string[]): boolean {
  return (
    typeof value === 'object' &&
    value !== null &&
    methods.every((m) => typeof (value as Record<string, unknown>)[m] === 'function')
  );
}

/**
 * Validates the options and applies the defaults. Throws
 * {@link UiServerConfigError} naming the first bad field.
 */
export function resolveUiServerOptions(
  options: UiServerOptions,
  defaultLogger: () => UiServerLogger,
): ResolvedUiServerOptions {
  rejectUnknown(options, OPTION_KEYS, '');
  rejectUnknown(options.limits ?? {}, LIMIT_KEYS, 'limits.');
  const parsed = shape.safeParse({ ...options, limits: options.limits ?? {} });
  if (!parsed.success) {
    const { field, message } = firstIssue(parsed.error, '');
    throw new UiServerConfigError(field, message);
  }
  if (!hasMethods(options.source, ['cards', 'subscribe'])) {
    throw new UiServerConfigError('source', 'must implement BoardSource (cards, subscribe)');
  }
  const commandMethods = ['createTask', 'cancel', 'retry', 'setUserCap', 'poolSnapshot', 'metrics'];
  if (!hasMethods(options.commands, commandMethods)) {
    throw new UiServerConfigError('commands', `must implement ${commandMethods.join(', ')}`);
  }
  const userTokens = Object.values(options.tokens.users);
  if (userTokens.includes(options.tokens.admin)) {
    throw new UiServerConfigError('tokens.admin', 'the admin token is also a user token');
  }
  const shared = userTokens.find((t, i) => userTokens.indexOf(t) !== i);
  if (shared !== undefined) {
    throw new UiServerConfigError('tokens.users', 'two users have the same token');
  }
  const limits: UiServerLimits = { ...UI_SERVER_DEFAULTS };
  for (const [k, v] of Object.entries(options.limits ?? {})) {
    if (v !== undefined) limits[k as keyof UiServerLimits] = v;
  }
  if (limits.maxTcpConnectionsPerAddress >= limits.maxTcpConnections) {
    throw new UiServerConfigError(
      'limits.maxTcpConnectionsPerAddress',
      `must be below maxTcpConnections (${limits.maxTcpConnections}), or one address can take every connection`,
    );
  }
  if (limits.headersTimeoutMs > limits.requestTimeoutMs) {
    throw new UiServerConfigError(
      'limits.headersTimeoutMs',
      `must be at most requestTimeoutMs (${limits.requestTimeoutMs})`,
    );
  }
  return {
    source: options.source,
    commands: options.commands,
    tokens: options.tokens,
    port: options.port,
    host: options.host,
    clock: options.clock ?? systemClock,
    logger: options.logger ?? defaultLogger(),
    limits,
  };
}
