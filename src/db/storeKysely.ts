/**
 * The Kysely a store hands out (`DbHandle.db`), whose `destroy()` closes the
 * store rather than kysely's driver. Kysely's own `destroy()` marks its
 * driver destroyed, and every later query then fails inside kysely with an
 * untyped "driver has already been destroyed", before the pool wrapper
 * (src/db/deadlinePool.ts) could answer `StoreClosedError`. An application
 * that closes the store that way under a running node (a shutdown hook
 * written for plain kysely) must hear what `store.close()` gives it: one
 * typed `StoreClosedError` (`DB_STORE_CLOSED`), and a command answered
 * `unavailable`.
 *
 * Instances derived from it (`withPlugin`, `withSchema`, `withTables`) are
 * plain kysely: their `destroy()` is kysely's.
 */
import { Kysely, type KyselyConfig } from 'kysely';
import type { Database } from './schema.js';

/**
 * @example
 * ```ts
 * const db = new StoreKysely({ dialect }, () => handle.close());
 * await db.destroy(); // the same as handle.close(): later queries reject with StoreClosedError
 * ```
 */
export class StoreKysely extends Kysely<Database> {
  readonly #close: () => Promise<void>;

  constructor(config: KyselyConfig, close: () => Promise<void>) {
    super(config);
    this.#close = close;
  }

  /** Closes the store (`DbHandle.close()`): idempotent, as that is. */
  override async destroy(): Promise<void> {
    await this.#close();
  }
}
