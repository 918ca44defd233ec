/**
 * The trivial query a readiness probe asks (`GET /readyz`): the store
 * answered, on one pooled connection, whatever the rows say.
 */
import { sql } from 'kysely';
import type { Db } from './transaction.js';

/** Resolves once the store answered `SELECT 1`; rejects with the driver's error. */
export async function pingStore(db: Db): Promise<void> {
  await sql`SELECT 1`.execute(db);
}
