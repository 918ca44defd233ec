/**
 * Runs work in a transaction, joining the caller's when there is one, so
 * repository functions compose: a caller can claim and record in one commit.
 */
import type { Kysely } from 'kysely';
import type { Database } from './schema.js';

/** The store's query builder; a `Transaction` is one too. */
export type Db = Kysely<Database>;

/** Runs `fn` in `db`'s transaction if it is one, else in a new transaction. */
export function inTransaction<T>(db: Db, fn: (tx: Db) => Promise<T>): Promise<T> {
  if (db.isTransaction) return fn(db);
  return db.transaction().execute(fn);
}
