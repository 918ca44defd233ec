/**
 * Which database errors are conditions (the server is restarting, a deadline
 * passed, two transactions collided) and which are bugs. The runtime retries
 * the first kind with backoff and a deadline, and lets the second crash the
 * actor: a retry cannot fix a bad query, and a restart cannot fix an outage.
 */

/** Which deadline passed. */
export type DbTimeoutKind =
  /** The server's `statement_timeout` (SQLSTATE 57014; also a cancel request). */
  | 'statement'
  /** The server's `lock_timeout` (55P03). */
  | 'lock'
  /** The server ended a transaction left idle past `idle_in_transaction_session_timeout` (25P03). */
  | 'idle_in_transaction'
  /** The client's own deadline (`queryTimeoutMs`): the server did not answer at all. */
  | 'client'
  /** No pooled connection within `connectTimeoutMs`. */
  | 'connect';

/**
 * A query or connection outlived its deadline. Transient: the statement was
 * cancelled (or its connection discarded), so retrying the unit of work is
 * safe. `cause` is the driver's error.
 *
 * @example
 * ```ts
 * new DbTimeoutError('lock', 'lock wait too long').code // => 'DB_TIMEOUT'
 * isTransientDbError(new DbTimeoutError('client', 'no answer')) // => true
 * ```
 */
export class DbTimeoutError extends Error {
  override readonly name = 'DbTimeoutError';
  readonly code = 'DB_TIMEOUT';
  constructor(
    readonly kind: DbTimeoutKind,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** SQLSTATEs that say "try again", by the reason why. */
const TRANSIENT_SQLSTATES: Readonly<Record<string, string>> = {
  '57P01': 'admin_shutdown (server stopping, or the backend was terminated)',
  '57P02': 'crash_shutdown',
  '57P03': 'cannot_connect_now (server starting up or shutting down)',
  '57014': 'query_canceled (statement_timeout)',
  '55P03': 'lock_not_available (lock_timeout)',
  '25P03': 'idle_in_transaction_session_timeout',
  '40001': 'serialization_failure',
  '40P01': 'deadlock_detected',
  '53300': 'too_many_connections',
  '08000': 'connection_exception',
  '08001': 'sqlclient_unable_to_establish_sqlconnection',
  '08003': 'connection_does_not_exist',
  '08006': 'connection_failure',
};

/** Socket errors of a server that is down, restarting or unreachable for now. */
const TRANSIENT_ERRNOS = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);

/**
 * node-postgres and pg-pool raise these as plain `Error`s with no code; their
 * texts are fixed in the driver (not localized), so matching them is stable.
 */
const TRANSIENT_DRIVER_MESSAGES = [
  'Connection terminated',
  'Query read timeout',
  'timeout exceeded when trying to connect',
  'Client has encountered a connection error and is not queryable',
];

/**
 * Errors raised while opening a connection for a query (pg-pool's
 * `connect`), whatever their SQLSTATE. The server was reachable before and
 * refuses sessions for now: "database is not currently accepting
 * connections" (55000, a database closed by `ALLOW_CONNECTIONS false`, whose
 * code other statements share), a database being renamed (3D000), a role's
 * login switched off. Retried with backoff and a deadline like a refused
 * socket; crashing the actor instead cannot make the server take sessions.
 */
const connectFailures = new WeakSet<object>();

/**
 * Marks `error` as a failure to open a connection (see `connectFailures`)
 * and returns it unchanged: callers that branch on its `code` still can.
 *
 * @example
 * ```ts
 * isTransientDbError(Object.assign(new Error('not accepting connections'), { code: '55000' })) // => false
 * isTransientDbError(connectFailed(Object.assign(new Error('not accepting connections'), { code: '55000' }))) // => true
 * connectFailed(Object.assign(new Error('x'), { code: '55000' })).code // => '55000'
 * ```
 */
export function connectFailed<E>(error: E): E {
  if (typeof error === 'object' && error !== null) connectFailures.add(error);
  return error;
}

/**
 * True when `error` (or any `cause` / `AggregateError` member under it) is a
 * condition worth retrying with backoff: the server refused, reset or ended
 * the connection; it is shutting down or starting (57P01, 57P02, 57P03); a
 * deadline passed (`DbTimeoutError`, 57014, 55P03, 25P03, "Query read
 * timeout", the pool's connection timeout); two transactions collided (40001,
 * 40P01); it has no connection slot left (53300); or it refused to open a
 * connection for now (`connectFailed`). Anything else (a syntax
 * error, a constraint violation, a `DbError` of this module) is a bug or a
 * decision, and retrying would only repeat it.
 *
 * @example
 * ```ts
 * isTransientDbError(Object.assign(new Error('terminating connection'), { code: '57P01' })) // => true
 * isTransientDbError(Object.assign(new Error('duplicate key'), { code: '23505' })) // => false
 * isTransientDbError(new Error('connect', { cause: { code: 'ECONNREFUSED' } })) // => true
 * ```
 */
export function isTransientDbError(error: unknown): boolean {
  return transientReason(error) !== undefined;
}

/** Why `error` is transient (for logs), or undefined when it is not. */
export function transientReason(error: unknown, depth = 0): string | undefined {
  if (depth > 8 || typeof error !== 'object' || error === null) return undefined;
  if (error instanceof DbTimeoutError) return `timeout (${error.kind})`;
  if (connectFailures.has(error)) return `could not open a connection${codeOf(error)}`;
  const { code, message, cause, errors } = error as {
    code?: unknown;
    message?: unknown;
    cause?: unknown;
    errors?: unknown;
  };
  if (typeof code === 'string') {
    if (TRANSIENT_SQLSTATES[code] !== undefined) return TRANSIENT_SQLSTATES[code];
    if (TRANSIENT_ERRNOS.has(code)) return code;
  }
  if (typeof message === 'string') {
    const known = TRANSIENT_DRIVER_MESSAGES.find((m) => message.startsWith(m));
    if (known !== undefined) return known;
  }
  if (Array.isArray(errors)) {
    for (const member of errors) {
      const reason = transientReason(member, depth + 1);
      if (reason !== undefined) return reason;
    }
  }
  return transientReason(cause, depth + 1);
}

function codeOf(error: object): string {
  const { code } = error as { code?: unknown };
  return typeof code === 'string' ? ` (${code})` : '';
}

/**
 * The typed form of a driver's deadline error, or undefined when `error` is
 * not one. Only deadlines are wrapped: other driver errors keep their own
 * SQLSTATE `code` for callers that branch on it.
 */
export function toDbTimeoutError(error: unknown): DbTimeoutError | undefined {
  if (typeof error !== 'object' || error === null || error instanceof DbTimeoutError) {
    return undefined;
  }
  const { code, message } = error as { code?: unknown; message?: unknown };
  const text = typeof message === 'string' ? message : '';
  const kind: DbTimeoutKind | undefined =
    code === '57014'
      ? 'statement'
      : code === '55P03'
        ? 'lock'
        : code === '25P03'
          ? 'idle_in_transaction'
          : text === 'Query read timeout'
            ? 'client'
            : text.startsWith('timeout exceeded when trying to connect') ||
                text.startsWith('Connection terminated due to connection timeout')
              ? 'connect'
              : undefined;
  if (kind === undefined) return undefined;
  return new DbTimeoutError(kind, `database ${kind} deadline passed: ${text}`, { cause: error });
}

/**
 * True when `error` (or a `cause` under it) is a data exception, SQLSTATE
 * class 22: the server could not take a value it was sent (invalid json
 * text, a string too long, a number out of range). Not transient, and not
 * the store's failure either: the input was wrong, and the schemas before
 * the SQL missed it, so the caller hears "invalid" and the node logs a bug.
 *
 * @example
 * ```ts
 * isDataException(Object.assign(new Error('invalid input syntax for type json'), { code: '22P02' })) // => true
 * isDataException(new Error('tick', { cause: { code: '22001' } })) // => true
 * isDataException(Object.assign(new Error('duplicate key'), { code: '23505' })) // => false
 * isDataException(new DbTimeoutError('client', 'no answer')) // => false
 * ```
 */
export function isDataException(error: unknown, depth = 0): boolean {
  if (depth > 8 || typeof error !== 'object' || error === null) return false;
  const { code, cause } = error as { code?: unknown; cause?: unknown };
  if (typeof code === 'string' && /^22[0-9A-Z]{3}$/.test(code)) return true;
  return isDataException(cause, depth + 1);
}
