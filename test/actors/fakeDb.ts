/**
 * A Kysely over a fake driver whose every query is answered by `answer`, so
 * a test can make one query fail or hang for certain, with no engine.
 */
import {
  type CompiledQuery,
  type DatabaseConnection,
  type Driver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type QueryResult,
} from 'kysely';
import type { Db } from '../../src/db/index.js';

export function fakeDb(answer: (sql: string) => Promise<{ rows: unknown[] }>) {
  const seen: string[] = [];
  const connection: DatabaseConnection = {
    async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
      seen.push(query.sql);
      return (await answer(query.sql)) as QueryResult<R>;
    },
    // biome-ignore lint/correctness/useYield: no streaming in this fake
    async *streamQuery() {
      throw new Error('not streamed');
    },
  };
  const driver: Driver = {
    init: async () => {},
    acquireConnection: async () => connection,
    beginTransaction: async () => {},
    commitTransaction: async () => {},
    rollbackTransaction: async () => {},
    releaseConnection: async () => {},
    destroy: async () => {},
  };
  const db = new Kysely({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => driver,
      createIntrospector: (k) => new PostgresIntrospector(k),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
  }) as unknown as Db;
  return { db, seen };
}
