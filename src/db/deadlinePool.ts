/**
 * The pool kysely sees: a `pg.Pool` whose deadline errors come out typed
 * (`DbTimeoutError`) and whose connections are thrown away after a client
 * deadline. node-postgres' `query_timeout` rejects the query but leaves the
 * connection waiting for the server's answer; handed back to the pool it
 * would stall the next caller behind a server that may never answer, so the
 * connection is released with an error, which makes pg-pool destroy it.
 */
import type { PostgresCursor, PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely';
import type pg from 'pg';
import { StoreClosedError } from './errors.js';
import { connectFailed, toDbTimeoutError } from './transientErrors.js';

/** What the wrapper knows of the store around the pool. */
export interface PoolStore {
  engine: 'postgres' | 'pglite';
  /** Whether the store was closed (its handle, or the PGlite under it): then every error is `StoreClosedError`. */
  isClosed(): boolean;
  /** Ends the pool once, whoever asks (the handle's `close()`, kysely's `destroy()`). */
  end(): Promise<void>;
}

/**
 * Wraps `pool` for kysely's `PostgresDialect`. `end()` ends the pool
 * (`store.end`). Once `store.isClosed()`, a checkout or a query rejects with
 * `StoreClosedError` (the driver's error as `cause`): a runtime left running
 * on a closed store hears one typed error, not "Cannot use a pool after
 * calling end on the pool" or a PGlite internal on every tick.
 *
 * @example
 * ```ts
 * const store = { engine: 'postgres', isClosed: () => pool.ended, end: () => pool.end() };
 * const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: deadlinePool(pool, store) }) });
 * ```
 */
export function deadlinePool(pool: pg.Pool, store: PoolStore): PostgresPool {
  return {
    async connect() {
      if (store.isClosed()) throw new StoreClosedError(store.engine);
      let client: pg.PoolClient;
      try {
        client = await pool.connect();
      } catch (error) {
        if (store.isClosed()) throw new StoreClosedError(store.engine, { cause: error });
        throw toDbTimeoutError(error) ?? connectFailed(error);
      }
      return deadlineClient(client, store);
    },
    end: () => store.end(),
  };
}

function deadlineClient(client: pg.PoolClient, store: PoolStore): PostgresPoolClient {
  // Why the connection must not go back to the pool, if it must not.
  let broken: Error | undefined;
  // pg-pool listens for errors only on idle clients. A checked-out one (say,
  // inside a transaction) that the server ends between queries (a restart,
  // the idle-in-transaction timeout) would throw from its 'error' event and
  // take the process down; kept here, it becomes the next query's error.
  let lost: Error | undefined;
  const onError = (error: Error) => {
    lost ??= error;
    broken ??= error;
  };
  client.on('error', onError);
  function query<R>(
    sql: string,
    parameters: ReadonlyArray<unknown>,
  ): Promise<PostgresQueryResult<R>>;
  function query<R>(cursor: PostgresCursor<R>): PostgresCursor<R>;
  function query<R>(
    sqlOrCursor: string | PostgresCursor<R>,
    parameters?: ReadonlyArray<unknown>,
  ): Promise<PostgresQueryResult<R>> | PostgresCursor<R> {
    // Cursors (kysely's `stream()`) go through as they are: pg reports their
    // errors on `read()`, which this wrapper does not see.
    if (typeof sqlOrCursor !== 'string') {
      return client.query(sqlOrCursor as unknown as pg.Submittable) as unknown as PostgresCursor<R>;
    }
    return client.query(sqlOrCursor, parameters as unknown[]).then(
      (result) => result as unknown as PostgresQueryResult<R>,
      (error: unknown) => {
        // After a lost connection every query fails with "not queryable";
        // the error that ended the connection says why.
        const cause = lost ?? error;
        if (store.isClosed()) {
          broken = new StoreClosedError(store.engine, { cause });
          throw broken;
        }
        const timeout = toDbTimeoutError(cause);
        if (timeout?.kind === 'client') broken = timeout;
        throw timeout ?? cause;
      },
    );
  }
  return {
    query,
    release: (destroy?: boolean) => {
      client.off('error', onError);
      client.release(broken ?? (destroy === true ? true : undefined));
    },
  };
}
