/**
 * The Kysely a store hands out (`DbHandle.db`), whose `destroy()` closes the
 * store rather than kysely's driver. Kysely's own `destroy()` marks its
 * (internal, shared) driver destroyed, and every later query then fails
 * inside kysely with an untyped "driver has already been destroyed", before
 * the pool wrapper (src/db/deadlinePool.ts) could answer `StoreClosedError`.
 * An application that closes the store that way under a running node (a
 * shutdown hook written for plain kysely) must hear what `store.close()`
 * gives it: one typed `StoreClosedError` (`DB_STORE_CLOSED`), and a command
 * answered `unavailable`.
 *
 * So it is built from props of its own, over a `StoreDriver`
 * (src/db/storeDriver.ts) instead of kysely's `RuntimeDriver`, and the
 * instances it derives (`withPlugin`, `withoutPlugins`, `withSchema`,
 * `withTables`) are `StoreKysely` over the same props: kysely's versions
 * return a plain `Kysely` whose `destroy()` would mark the shared driver
 * destroyed for every instance, `store.db` included. The instance kysely
 * builds inside `connection().execute` (a plain `Kysely` over these props)
 * reaches the same `StoreDriver`, so its `destroy()` closes the store too.
 * What stays kysely's: a transaction's `destroy()` throws kysely's own
 * "not supported" error, as on any kysely.
 */
import {
  DefaultConnectionProvider,
  DefaultQueryExecutor,
  type DrainOuterGeneric,
  isKyselyProps,
  Kysely,
  type KyselyConfig,
  type KyselyPlugin,
  type KyselyProps,
  type QueryExecutor,
  WithSchemaPlugin,
} from 'kysely';
import type { Database } from './schema.js';
import { StoreDriver } from './storeDriver.js';

/** What a store's kysely is built from: kysely's config without `log` (storeDriver.ts says why). */
export type StoreKyselyConfig = Omit<KyselyConfig, 'log'>;

/**
 * @example
 * ```ts
 * const db = new StoreKysely({ dialect }, () => handle.close());
 * await db.destroy(); // the same as handle.close(): later queries reject with StoreClosedError
 * await db.withPlugin(plugin).destroy(); // the same, and so is a second destroy
 * ```
 */
export class StoreKysely extends Kysely<Database> {
  readonly #props: KyselyProps;
  readonly #close: () => Promise<void>;

  /** `config` is the store's; the props form is how an instance derives another over the same store. */
  constructor(config: StoreKyselyConfig | KyselyProps, close: () => Promise<void>) {
    const props = isKyselyProps(config) ? config : storeProps(config, close);
    super(props);
    this.#props = props;
    this.#close = close;
  }

  /** Closes the store (`DbHandle.close()`): idempotent, as that is. */
  override async destroy(): Promise<void> {
    await this.#close();
  }

  override withPlugin(plugin: KyselyPlugin): StoreKysely {
    return this.#derive(this.#props.executor.withPlugin(plugin));
  }

  override withoutPlugins(): StoreKysely {
    return this.#derive(this.#props.executor.withoutPlugins());
  }

  override withSchema(schema: string): StoreKysely {
    return this.#derive(this.#props.executor.withPluginAtFront(new WithSchemaPlugin(schema)));
  }

  // Only the tables' type changes (kysely's signature), so it is the same store's kysely.
  override withTables<T extends Record<string, Record<string, unknown>>>(): Kysely<
    DrainOuterGeneric<Database & T>
  > {
    return this.#derive(this.#props.executor) as unknown as Kysely<DrainOuterGeneric<Database & T>>;
  }

  #derive(executor: QueryExecutor): StoreKysely {
    return new StoreKysely({ ...this.#props, executor }, this.#close);
  }
}

/** What kysely's constructor builds from a config, over a `StoreDriver`. */
function storeProps(config: StoreKyselyConfig, close: () => Promise<void>): KyselyProps {
  const dialect = config.dialect;
  const driver = new StoreDriver(dialect.createDriver(), close);
  const executor = new DefaultQueryExecutor(
    dialect.createQueryCompiler(),
    dialect.createAdapter(),
    new DefaultConnectionProvider(driver),
    config.plugins ?? [],
  );
  return { config, executor, dialect, driver };
}
