/**
 * The Postgres server the benchmark suites use, and scratch databases on it:
 * ROUNDTABLE_BENCH_DATABASE_URL, else ROUNDTABLE_TEST_DATABASE_URL, else the
 * local server.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export const SERVER_URL =
  process.env.ROUNDTABLE_BENCH_DATABASE_URL ??
  process.env.ROUNDTABLE_TEST_DATABASE_URL ??
  'postgres://postgres@127.0.0.1:5432/postgres';

/** Runs one statement (CREATE or DROP DATABASE) on a connection of its own. */
export async function admin(statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: SERVER_URL, connectionTimeoutMillis: 10_000 });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

/** A fresh database on the server for one suite: its URL, and `drop` for the suite's `finally`. */
export async function scratchDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `roundtable_bench_${randomBytes(4).toString('hex')}`;
  await admin(`CREATE DATABASE ${name}`);
  const u = new URL(SERVER_URL);
  u.pathname = `/${name}`;
  return {
    url: u.toString(),
    drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}
