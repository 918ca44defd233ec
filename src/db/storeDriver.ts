/**
 * The driver under every `StoreKysely` of one store (src/db/storeKysely.ts):
 * it does what kysely's internal `RuntimeDriver` does for a plain `Kysely`
 * (initialises the dialect's driver once, before the first connection)
 * except keep a "destroyed" flag. Its `destroy()` closes the store.
 *
 * Why its own concept, and why not kysely's: `RuntimeDriver` is not
 * exported, and every instance kysely derives (`withPlugin`, `withSchema`,
 * the one `connection()` hands its callback) shares it. Its `destroy()`
 * marks it destroyed, and from then on every instance of the store fails
 * inside kysely with an untyped "driver has already been destroyed". With
 * this driver nothing is marked: a closed store's pool wrapper
 * (src/db/deadlinePool.ts) answers every later query `StoreClosedError`,
 * whichever instance closed it. Kysely's query log (`KyselyConfig.log`) was
 * added by `RuntimeDriver` and is not offered (the store sets none).
 */
import type { DatabaseConnection, Driver, QueryCompiler, TransactionSettings } from 'kysely';

type CompileQuery = QueryCompiler['compileQuery'];

export class StoreDriver implements Driver {
  readonly #driver: Driver;
  readonly #close: () => Promise<void>;
  #init: Promise<void> | undefined;
  #initDone = false;

  /** `driver` is the dialect's; `close` closes the store (idempotent, as `DbHandle.close()` is). */
  constructor(driver: Driver, close: () => Promise<void>) {
    this.#driver = driver;
    this.#close = close;
  }

  /** Initialises the dialect's driver once; a failed init is tried again by the next caller. */
  async init(): Promise<void> {
    this.#init ??= this.#driver.init().then(
      () => {
        this.#initDone = true;
      },
      (error: unknown) => {
        this.#init = undefined;
        throw error;
      },
    );
    await this.#init;
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    if (!this.#initDone) await this.init();
    return this.#driver.acquireConnection();
  }

  releaseConnection(connection: DatabaseConnection): Promise<void> {
    return this.#driver.releaseConnection(connection);
  }

  beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    return this.#driver.beginTransaction(connection, settings);
  }

  commitTransaction(connection: DatabaseConnection): Promise<void> {
    return this.#driver.commitTransaction(connection);
  }

  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    return this.#driver.rollbackTransaction(connection);
  }

  savepoint(connection: DatabaseConnection, name: string, compile: CompileQuery): Promise<void> {
    return this.#savepointCall('savepoint')(connection, name, compile);
  }

  rollbackToSavepoint(
    connection: DatabaseConnection,
    name: string,
    compile: CompileQuery,
  ): Promise<void> {
    return this.#savepointCall('rollbackToSavepoint')(connection, name, compile);
  }

  releaseSavepoint(
    connection: DatabaseConnection,
    name: string,
    compile: CompileQuery,
  ): Promise<void> {
    return this.#savepointCall('releaseSavepoint')(connection, name, compile);
  }

  /** Closes the store, never the dialect's driver alone: `store.close()` ends the pool itself. */
  destroy(): Promise<void> {
    return this.#close();
  }

  /** The dialect driver's savepoint method, or kysely's own error when it has none. */
  #savepointCall(
    name: 'savepoint' | 'rollbackToSavepoint' | 'releaseSavepoint',
  ): (connection: DatabaseConnection, savepoint: string, compile: CompileQuery) => Promise<void> {
    const call = this.#driver[name];
    if (call === undefined)
      return () =>
        Promise.reject(new Error(`The \`${name}\` method is not supported by this driver`));
    return call.bind(this.#driver);
  }
}
