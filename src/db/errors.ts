/**
 * The typed errors of the durable store. Every one carries a stable `code`
 * (documented in docs/data.md) so callers branch on data, not on messages,
 * and I/O failures keep their `cause`.
 */

/** Stable codes of the store's errors. */
export type DbErrorCode =
  | 'DB_VALIDATION'
  | 'DB_STALE_STATUS'
  | 'DB_NOT_FOUND'
  | 'DB_CORRUPT_ROW'
  | 'DB_MIGRATION'
  | 'DB_CONNECT'
  | 'DB_NO_SESSION'
  | 'DB_POOLED_SESSION'
  | 'DB_STORE_CLOSED';

/** Base class: `instanceof DbError` catches every error this module throws on purpose. */
export abstract class DbError extends Error {
  abstract readonly code: DbErrorCode;
}

/** Input rejected before anything was written. `field` is a dotted path, e.g. `spec.command.0`. */
export class ValidationError extends DbError {
  override readonly name = 'ValidationError';
  readonly code = 'DB_VALIDATION';
  constructor(
    readonly field: string,
    readonly problem: string,
  ) {
    super(`invalid ${field}: ${problem}`);
  }
}

/** What a compare-and-set expected, or found, on a session row. */
export interface StatusAndEpoch {
  status: string;
  epoch: number;
}

/**
 * A compare-and-set on (id, status, epoch) matched no row: someone else moved
 * the session first. Never a silent no-op, so two owners cannot both believe
 * they finished one session.
 */
export class StaleStatusError extends DbError {
  override readonly name = 'StaleStatusError';
  readonly code = 'DB_STALE_STATUS';
  constructor(
    readonly sessionId: string,
    readonly expected: StatusAndEpoch,
    readonly actual: StatusAndEpoch,
  ) {
    super(
      `session ${sessionId}: expected ${expected.status}@${expected.epoch}, found ${actual.status}@${actual.epoch}`,
    );
  }
}

/** No row with this id (or none visible to this user). */
export class NotFoundError extends DbError {
  override readonly name = 'NotFoundError';
  readonly code = 'DB_NOT_FOUND';
  constructor(
    readonly entity: 'task' | 'session',
    readonly id: string,
  ) {
    super(`${entity} ${id} not found`);
  }
}

/** A row read back does not match the schema: fail where it is read, not later. */
export class CorruptRowError extends DbError {
  override readonly name = 'CorruptRowError';
  readonly code = 'DB_CORRUPT_ROW';
  constructor(
    readonly table: string,
    readonly rowId: string,
    readonly field: string,
    options?: { cause?: unknown },
  ) {
    super(`corrupt ${table} row ${rowId}: bad ${field}`, options);
  }
}

/** A migration failed, or the recorded history disagrees with the static list. */
export class MigrationError extends DbError {
  override readonly name = 'MigrationError';
  readonly code = 'DB_MIGRATION';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** The store could not be opened (server unreachable, PGlite directory unusable). */
export class ConnectError extends DbError {
  override readonly name = 'ConnectError';
  readonly code = 'DB_CONNECT';
  /** What went wrong, without the advice (a CLI words its own). */
  readonly summary: string;
  /** What to do about it, when the cause says (a pooler refusing the startup settings). */
  readonly advice: string | null;
  constructor(summary: string, options?: { cause?: unknown; advice?: string }) {
    super(options?.advice ? `${summary}: ${options.advice}` : summary, options);
    this.summary = summary;
    this.advice = options?.advice ?? null;
  }
}

/**
 * Whether a refused connect is a transaction pooler's refusal of the
 * session settings sent in the startup packet (PgBouncer's stock answer to
 * `statement_timeout`): the caller should connect with `pooler: 'transaction'`.
 *
 * @example
 * ```ts
 * refusedByPooler(new Error('unsupported startup parameter: statement_timeout')) // => true
 * refusedByPooler(new Error('connect ECONNREFUSED 127.0.0.1:5432')) // => false
 * refusedByPooler('unsupported startup parameter: options') // => false
 * ```
 */
export function refusedByPooler(error: unknown): boolean {
  return error instanceof Error && POOLER_REFUSAL.test(error.message);
}

/** PgBouncer's words when it refuses a setting sent at connect (the CLI reads the cause's text with it too). */
export const POOLER_REFUSAL = /unsupported startup parameter/;

/**
 * Asked for something that needs a server session of its own (LISTEN, a
 * session lock) from a handle opened behind a transaction pooler
 * (`pooler: 'transaction'`): the pooler hands each transaction whichever
 * server connection is free, so the subscription or the lock would stay on
 * a connection that then serves other clients.
 */
export class NoSessionError extends DbError {
  override readonly name = 'NoSessionError';
  readonly code = 'DB_NO_SESSION';
}

/** What a library user behind a transaction pooler does (connect's refusal says it too). */
export const POOLED_SESSION_ADVICE =
  "behind a transaction pooler (PgBouncer in transaction mode), connect with { pooler: 'transaction' } (docs/operations.md)";

/**
 * A connection opened as a session of its own is not one
 * (src/db/sessionProbe.ts): a notification sent by another connection never
 * reached its LISTEN. A transaction pooler that accepts the startup settings
 * stands in front of the server; LISTEN and session locks would silently
 * not work there, so a node refuses to start. `summary` says what was seen,
 * `advice` what to do (a CLI words its own, `--pooler transaction`).
 */
export class PooledSessionError extends DbError {
  override readonly name = 'PooledSessionError';
  readonly code = 'DB_POOLED_SESSION';
  /** What was seen, without the advice. */
  readonly summary: string;
  readonly advice = POOLED_SESSION_ADVICE;
  constructor(
    readonly waitedMs: number,
    readonly sent: number,
  ) {
    const summary = `a connection of this node is not a session of its own: none of ${sent} notifications sent from another connection reached its LISTEN within ${waitedMs} ms (a transaction pooler that accepts the startup settings?)`;
    super(`${summary}: ${POOLED_SESSION_ADVICE}`);
    this.summary = summary;
  }
}

/**
 * A query asked of a store that was closed: the handle's `close()` ran, or
 * the PGlite it was opened over was closed under it. Final, never transient:
 * no retry can reopen it. A runtime still running on the store (its
 * application closed the store before `runtime.stop()`) tells its `onError`
 * of the first one only. `cause` is the driver's error, when there was one.
 *
 * @example
 * ```ts
 * new StoreClosedError('pglite').code // => 'DB_STORE_CLOSED'
 * new StoreClosedError('postgres').message // => 'the postgres store is closed: stop the runtime before closing its store'
 * ```
 */
export class StoreClosedError extends DbError {
  override readonly name = 'StoreClosedError';
  readonly code = 'DB_STORE_CLOSED';
  constructor(
    readonly engine: 'postgres' | 'pglite',
    options?: { cause?: unknown },
  ) {
    super(`the ${engine} store is closed: stop the runtime before closing its store`, options);
  }
}

/**
 * The `StoreClosedError` in `error`, looking through `cause` and the members
 * of an `AggregateError` (a pass that failed and whose unlock failed too),
 * or null.
 *
 * @example
 * ```ts
 * storeClosedIn(new StoreClosedError('pglite'))?.code // => 'DB_STORE_CLOSED'
 * storeClosedIn(new Error('pass failed', { cause: new StoreClosedError('postgres') }))?.engine // => 'postgres'
 * storeClosedIn(new AggregateError([new Error('x'), new StoreClosedError('pglite')]))?.engine // => 'pglite'
 * storeClosedIn(new Error('connect ECONNREFUSED')) // => null
 * ```
 */
export function storeClosedIn(error: unknown, depth = 0): StoreClosedError | null {
  if (error instanceof StoreClosedError) return error;
  if (!(error instanceof Error) || depth > 8) return null;
  if (error instanceof AggregateError)
    for (const e of error.errors) {
      const found = storeClosedIn(e, depth + 1);
      if (found) return found;
    }
  return storeClosedIn(error.cause, depth + 1);
}
