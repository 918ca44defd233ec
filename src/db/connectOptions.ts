/**
 * `connect()`'s options: one defaults object spread under the caller's, and
 * a validator that starts nothing, names the bad key, and suggests the near
 * one for an unknown key (the ws / OTP `check_childspecs` habit).
 */
import type { PGlite } from '@electric-sql/pglite';
import { didYouMean } from '../common/didYouMean.js';
import type { ListenTimers } from './dedicatedClient.js';
import { ValidationError } from './errors.js';

/** What stands between a node and its Postgres server (ConnectOptions.pooler). */
export type Pooler = 'none' | 'transaction';
export const POOLERS: readonly Pooler[] = ['none', 'transaction'];

export interface ConnectOptions {
  /** A Postgres URL. When set, the server is used and PGlite is not loaded. */
  databaseUrl?: string;
  /** PGlite data directory; `memory://` for a throwaway store. */
  dataDir?: string;
  /**
   * An already open PGlite to use instead of opening `dataDir`. The caller
   * owns it: `close()` leaves it open. Used by tests to share one instance.
   */
  pglite?: PGlite;
  /**
   * What stands between the node and the server. `transaction`: a pooler in
   * transaction mode (PgBouncer's `pool_mode = transaction`), which gives
   * each transaction whichever server connection is free. Then nothing
   * session-scoped is asked of the server: no settings in the startup
   * packet (the three server-side deadlines below; a pooler refuses them,
   * set them on the role instead: the client deadline `queryTimeoutMs`
   * still holds), no LISTEN (`listen` rejects with `NoSessionError`: poll),
   * and no session locks (`holdBootLock`, `holdLeaderLock` are null, as on
   * PGlite). Default `none`: a direct connection or a session-mode pooler.
   */
  pooler?: Pooler;
  /** Server pool size. PGlite always uses one connection (it has one backend). */
  poolMax?: number;
  /** Deadline for getting a server connection, in ms. */
  connectTimeoutMs?: number;
  /**
   * Server-side deadline of one statement (`statement_timeout`), in ms; 0
   * leaves the server's own setting. Raise it for a migration that rewrites
   * a large table.
   */
  statementTimeoutMs?: number;
  /** Server-side deadline for waiting on one lock, advisory locks too (`lock_timeout`); 0: the server's. */
  lockTimeoutMs?: number;
  /**
   * Client-side deadline of one query, in ms: the way out when the server
   * does not answer at all (a hung host, a cut network), where its own
   * timeouts cannot help. Default `statementTimeoutMs + 5000`, so the server
   * normally cancels first and says why; 0 when `statementTimeoutMs` is 0.
   */
  queryTimeoutMs?: number;
  /** The server ends a session idle inside a transaction this long (`idle_in_transaction_session_timeout`). */
  idleInTransactionTimeoutMs?: number;
  /** First wait before a lost listener reconnects; doubles up to `listenRetryMaxMs`. */
  listenRetryMinMs?: number;
  listenRetryMaxMs?: number;
  /** A listening connection runs `SELECT 1` this often, so a silent network cut is noticed. */
  listenHeartbeatMs?: number;
  /** Timer functions listeners wait with (tests). Default: the global ones. */
  timers?: ListenTimers;
  /** Errors of idle pooled connections (a server restart) and of listeners; default: a process warning. */
  onPoolError?: (error: Error) => void;
}

/** Defaults, spread under the caller's options. */
export const CONNECT_DEFAULTS = {
  dataDir: './.roundtable/pgdata',
  poolMax: 10,
  connectTimeoutMs: 10_000,
  statementTimeoutMs: 15_000,
  lockTimeoutMs: 5_000,
  idleInTransactionTimeoutMs: 30_000,
  listenRetryMinMs: 100,
  listenRetryMaxMs: 5_000,
  listenHeartbeatMs: 10_000,
} as const;

/** The client deadline's margin over the server's, so the server's clearer error comes first. */
export const QUERY_TIMEOUT_MARGIN_MS = 5_000;

/** Integer options (ms, or a count), range-checked by the validator. */
const NUMERIC_OPTIONS = [
  'poolMax',
  'connectTimeoutMs',
  'statementTimeoutMs',
  'lockTimeoutMs',
  'queryTimeoutMs',
  'idleInTransactionTimeoutMs',
  'listenRetryMinMs',
  'listenRetryMaxMs',
  'listenHeartbeatMs',
] as const;

const KNOWN_OPTIONS = [
  'databaseUrl',
  'dataDir',
  'pglite',
  'timers',
  'onPoolError',
  'pooler',
  ...NUMERIC_OPTIONS,
] as const;

/** Durations that may be 0 (off); the rest must be positive. */
const MAY_BE_ZERO = new Set([
  'statementTimeoutMs',
  'lockTimeoutMs',
  'queryTimeoutMs',
  'idleInTransactionTimeoutMs',
]);

/** Postgres takes these settings as int4 ms, and Node's timers overflow past it too. */
const MAX_MS = 2 ** 31 - 1;

type Resolved = Omit<
  ConnectOptions,
  keyof typeof CONNECT_DEFAULTS | 'queryTimeoutMs' | 'pooler'
> & {
  -readonly [K in keyof typeof CONNECT_DEFAULTS]: (typeof CONNECT_DEFAULTS)[K] extends string
    ? string
    : number;
} & { queryTimeoutMs: number; pooler: Pooler };

/**
 * The options with defaults filled in. Throws `ValidationError` naming the
 * key: unknown (with a suggestion), or a duration that is not an integer
 * number of ms in range.
 *
 * @example
 * ```ts
 * validateConnectOptions({}).queryTimeoutMs // => 20000
 * validateConnectOptions({ statementTimeoutMs: 0 }).queryTimeoutMs // => 0
 * validateConnectOptions({ statementTimeout: 5 }) // throws ValidationError
 * validateConnectOptions({ lockTimeoutMs: -1 }) // throws ValidationError
 * validateConnectOptions({}).pooler // => 'none'
 * validateConnectOptions({ databaseUrl: 'postgres://h/db', pooler: 'transaction' }).pooler // => 'transaction'
 * validateConnectOptions({ pooler: 'transaction' }) // throws ValidationError
 * validateConnectOptions({ databaseUrl: 'postgres://h/db', pooler: 'session' }) // throws ValidationError
 * ```
 */
export function validateConnectOptions(options: ConnectOptions): Resolved {
  rejectUnknownKeys(options);
  const o = { ...CONNECT_DEFAULTS, ...options };
  for (const key of NUMERIC_OPTIONS) {
    const value = o[key];
    if (value === undefined) continue;
    const min = MAY_BE_ZERO.has(key) ? 0 : 1;
    if (!Number.isInteger(value) || value < min || value > MAX_MS) {
      throw new ValidationError(key, `must be an integer from ${min} to ${MAX_MS}, got ${value}`);
    }
  }
  if (o.listenRetryMaxMs < o.listenRetryMinMs) {
    throw new ValidationError('listenRetryMaxMs', 'must not be below listenRetryMinMs');
  }
  const pooler = o.pooler ?? 'none';
  if (!POOLERS.includes(pooler))
    throw new ValidationError(
      'pooler',
      `must be one of ${POOLERS.join(', ')}, got ${String(pooler)}`,
    );
  // PGlite runs in this process: there is nothing between it and the node.
  if (pooler !== 'none' && o.databaseUrl === undefined)
    throw new ValidationError(
      'pooler',
      'a pooler stands before a Postgres server: set databaseUrl',
    );
  const queryTimeoutMs =
    o.queryTimeoutMs ??
    (o.statementTimeoutMs === 0
      ? 0
      : Math.min(MAX_MS, o.statementTimeoutMs + QUERY_TIMEOUT_MARGIN_MS));
  return { ...o, queryTimeoutMs, pooler };
}

function rejectUnknownKeys(options: object): void {
  for (const key of Object.keys(options)) {
    if ((KNOWN_OPTIONS as readonly string[]).includes(key)) continue;
    const near = didYouMean(key, KNOWN_OPTIONS);
    throw new ValidationError(
      key,
      `unknown connect option${near ? `; did you mean ${near}?` : ''}`,
    );
  }
}
