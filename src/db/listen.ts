/**
 * LISTEN/NOTIFY for both engines, behind `DbHandle.listen`.
 *
 * On a Postgres server a LISTEN belongs to one session, so it gets its own
 * `pg.Client`, never a pooled one: the pool hands connections out and takes
 * them back, which would drop or move the subscription. When that session
 * dies (a restart, `pg_terminate_backend`, a network cut) the listener says
 * `lost`, reconnects with capped exponential backoff and LISTENs again, then
 * says `listening`. Notifications sent while lost are gone, so a caller polls
 * while lost and once more on `listening`. An idle LISTEN session sees no
 * traffic and would not notice a silent network cut, hence a heartbeat query
 * with the client deadline. On PGlite, `pglite.listen` runs in process and
 * is never lost.
 */
import type { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { backoffDelay } from '../common/backoff.js';
import { endWithin, type ListenTimers } from './dedicatedClient.js';
import { ValidationError } from './errors.js';
import { checkEachConnection, type SessionCheck } from './sessionProbe.js';

export type ListenState = 'listening' | 'lost';

/** Stops a listener and closes its connection. Idempotent. */
export type Unlisten = () => Promise<void>;

export interface ServerListenConfig {
  /** The listener's own connection: URL, connect and query deadlines. */
  client: pg.ClientConfig;
  retryMinMs: number;
  retryMaxMs: number;
  heartbeatMs: number;
  /** Deadline for closing the connection on unsubscribe. */
  closeTimeoutMs: number;
  timers: ListenTimers;
  /** A callback that threw, or the error that lost the connection. */
  onError: (error: Error) => void;
  /** Asked of each connection before it LISTENs (src/db/sessionProbe.ts); none: not asked. */
  checkSession?: SessionCheck;
}

/**
 * Lower-case unquoted identifiers only: the name is spliced into `LISTEN`,
 * and unquoted names fold to lower case, so `NOTIFY Jobs` and `LISTEN jobs`
 * would otherwise disagree. 63 bytes is Postgres' identifier limit.
 */
const CHANNEL = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * Throws `ValidationError` unless `channel` is a lower-case identifier.
 *
 * @example
 * ```ts
 * assertChannel('session_queued') // => undefined
 * assertChannel('jobs; DROP TABLE tasks') // throws ValidationError
 * ```
 */
export function assertChannel(channel: string): void {
  if (typeof channel !== 'string' || !CHANNEL.test(channel)) {
    throw new ValidationError('channel', 'must match [a-z_][a-z0-9_]*, at most 63 characters');
  }
}

/**
 * The wait before reconnect attempt `failures` (0 = first): doubling from
 * `minMs`, capped at `maxMs`.
 *
 * @example
 * ```ts
 * listenRetryDelay(0, 100, 5000) // => 100
 * listenRetryDelay(3, 100, 5000) // => 800
 * listenRetryDelay(20, 100, 5000) // => 5000
 * ```
 */
export function listenRetryDelay(failures: number, minMs: number, maxMs: number): number {
  return backoffDelay(failures, { minMs, maxMs });
}

/** Listens on a Postgres server; resolves after the first attempt, reported as either state. */
export async function listenOnServer(
  config: ServerListenConfig,
  channel: string,
  onPayload: (payload: string) => void,
  onState?: (state: ListenState) => void,
): Promise<Unlisten> {
  assertChannel(channel);
  const { timers } = config;
  let stopped = false;
  let client: pg.Client | undefined;
  let state: ListenState | undefined;
  let failures = 0;
  let retryTimer: unknown;
  let beatTimer: unknown;
  const checked = checkEachConnection(config.checkSession, config.onError);

  const guard = (fn: () => void) => {
    try {
      fn();
    } catch (error) {
      config.onError(error instanceof Error ? error : new Error(String(error)));
    }
  };
  const report = (next: ListenState) => {
    if (state === next) return;
    state = next;
    guard(() => onState?.(next));
  };

  const close = async (c: pg.Client) => {
    c.removeAllListeners('notification');
    await endWithin(c, timers, config.closeTimeoutMs);
  };

  const drop = (c: pg.Client, error: unknown) => {
    if (client !== c) return;
    client = undefined;
    timers.clearTimeout(beatTimer);
    void close(c);
    if (stopped) return;
    if (state !== 'lost') {
      config.onError(new Error(`listener on ${channel} lost its connection`, { cause: error }));
    }
    report('lost');
    const wait = listenRetryDelay(failures++, config.retryMinMs, config.retryMaxMs);
    retryTimer = timers.setTimeout(() => void attempt(), wait);
  };

  const beat = (c: pg.Client) => {
    beatTimer = timers.setTimeout(() => {
      c.query('SELECT 1').then(
        () => {
          if (client === c) beat(c);
        },
        (error: unknown) => drop(c, error),
      );
    }, config.heartbeatMs);
  };

  const attempt = async () => {
    if (stopped) return;
    const c = new pg.Client(config.client);
    client = c;
    // Kept after a drop too: an 'error' with no listener would throw.
    c.on('error', (error) => drop(c, error));
    c.on('end', () => drop(c, new Error('listener connection ended')));
    c.on('notification', (message) => {
      if (message.channel === channel) guard(() => onPayload(message.payload ?? ''));
    });
    try {
      // Both waits are bounded: connectionTimeoutMillis and query_timeout.
      await c.connect();
      // A connection that is not a session of its own would LISTEN on a
      // pooled server connection and hear nothing: lost, and polled.
      await checked(c);
      await c.query(`LISTEN ${channel}`);
    } catch (error) {
      drop(c, error);
      return;
    }
    if (client !== c) return;
    failures = 0;
    report('listening');
    beat(c);
  };

  await attempt();
  return async () => {
    if (stopped) return;
    stopped = true;
    timers.clearTimeout(retryTimer);
    timers.clearTimeout(beatTimer);
    const c = client;
    client = undefined;
    if (c !== undefined) await close(c);
  };
}

/** Listens on PGlite: in process, one backend, so it is never lost. */
export async function listenOnPglite(
  pglite: PGlite,
  channel: string,
  onPayload: (payload: string) => void,
  onState: ((state: ListenState) => void) | undefined,
  onError: (error: Error) => void,
): Promise<Unlisten> {
  assertChannel(channel);
  const guard = (fn: () => void) => {
    try {
      fn();
    } catch (error) {
      onError(error instanceof Error ? error : new Error(String(error)));
    }
  };
  const unsubscribe = await pglite.listen(channel, (payload) => guard(() => onPayload(payload)));
  guard(() => onState?.('listening'));
  let done = false;
  return async () => {
    if (done) return;
    done = true;
    // A closed PGlite has dropped its listeners with everything else.
    if (!pglite.closed) await unsubscribe();
  };
}
