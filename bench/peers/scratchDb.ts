/**
 * Scratch databases on the shared Postgres server: one per system per run,
 * dropped afterwards, so each run starts from an empty schema and its
 * pg_stat_database counters belong to that run alone.
 */
import pg from 'pg';

/** Server URL without a database; `PEERS_PG_URL` overrides. */
export const SERVER_URL = process.env.PEERS_PG_URL ?? 'postgres://postgres@127.0.0.1:5432';

/** Counters from pg_stat_database that the writes-per-job figure is made of. */
export interface DbCounters {
  xactCommit: number;
  tupWritten: number;
  /** pg_stat_database.active_time: ms the database's backends spent executing statements. */
  activeMs: number;
}

/** One row of pg_stat_user_functions (needs track_functions, see `trackFunctions`). */
export interface FunctionTime {
  name: string;
  calls: number;
  totalMs: number;
  selfMs: number;
}

/**
 * A scratch database's name for one system and scenario: `PEERS_DB_TAG`
 * (lower-case letters, digits, `_`) is appended, so two benches on one
 * server (helpers measuring side by side) never drop each other's database.
 *
 * @example
 * ```ts
 * scratchName('roundtable-3nodes', 'tp_0') // => 'peers_roundtable3nodes_tp_0' (no tag set)
 * ```
 */
export function scratchName(system: string, scenario: string): string {
  const tag = process.env.PEERS_DB_TAG;
  return `peers_${system.replace(/[^a-z0-9]/g, '')}_${scenario}${tag ? `_${tag}` : ''}`;
}

export function urlFor(database: string): string {
  const u = new URL(SERVER_URL);
  u.pathname = `/${database}`;
  return u.toString();
}

async function withAdmin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({
    connectionString: urlFor('postgres'),
    connectionTimeoutMillis: 10_000,
  });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Creates an empty database and returns its URL. */
export async function createScratch(name: string): Promise<string> {
  if (!/^[a-z0-9_]+$/.test(name)) throw new RangeError(`scratch database name: ${name}`);
  await withAdmin(async (c) => {
    await c.query(`drop database if exists ${name} with (force)`);
    await c.query(`create database ${name}`);
  });
  return urlFor(name);
}

export async function dropScratch(name: string): Promise<void> {
  await withAdmin((c) => c.query(`drop database if exists ${name} with (force)`));
}

/**
 * Waits until no backend is connected to `name`: a backend flushes its
 * statistics when it exits, so counters read after this are complete.
 */
export async function waitForNoBackends(name: string, deadlineMs = 10_000): Promise<void> {
  const until = Date.now() + deadlineMs;
  await withAdmin(async (c) => {
    for (;;) {
      const r = await c.query<{ n: string }>(
        'select count(*) as n from pg_stat_activity where datname = $1',
        [name],
      );
      if (Number(r.rows[0]?.n ?? 0) === 0) return;
      if (Date.now() > until)
        throw new Error(`backends still connected to ${name} after ${deadlineMs} ms`);
      await new Promise((r2) => setTimeout(r2, 50));
    }
  });
}

export async function readCounters(name: string): Promise<DbCounters> {
  return withAdmin(async (c) => {
    const r = await c.query<{ x: string; t: string; a: number }>(
      `select xact_commit as x, tup_inserted + tup_updated + tup_deleted as t, active_time as a
         from pg_stat_database where datname = $1`,
      [name],
    );
    const row = r.rows[0];
    if (row === undefined) throw new Error(`no pg_stat_database row for ${name}`);
    return { xactCommit: Number(row.x), tupWritten: Number(row.t), activeMs: Number(row.a) };
  });
}

/** Times plpgsql and SQL functions in `name` from its next session on (track_functions = 'pl'). */
export async function trackFunctions(name: string): Promise<void> {
  if (!/^[a-z0-9_]+$/.test(name)) throw new RangeError(`scratch database name: ${name}`);
  await withAdmin((c) => c.query(`alter database ${name} set track_functions = 'pl'`));
}

/** pg_stat_user_functions of database `name` (flushed by backends that have exited). */
export async function readFunctionTimes(name: string): Promise<FunctionTime[]> {
  const client = new pg.Client({ connectionString: urlFor(name), connectionTimeoutMillis: 10_000 });
  await client.connect();
  try {
    const r = await client.query<{ f: string; c: string; t: number; s: number }>(
      'select funcname as f, calls as c, total_time as t, self_time as s from pg_stat_user_functions',
    );
    return r.rows.map((x) => ({
      name: x.f,
      calls: Number(x.c),
      totalMs: Number(x.t),
      selfMs: Number(x.s),
    }));
  } finally {
    await client.end();
  }
}

/** Server version and the settings that bound write throughput. */
export async function serverInfo(): Promise<Record<string, string>> {
  return withAdmin(async (c) => {
    const out: Record<string, string> = {};
    const v = await c.query<{ v: string }>('select version() as v');
    out.version = v.rows[0]?.v ?? 'unknown';
    for (const s of [
      'shared_buffers',
      'synchronous_commit',
      'fsync',
      'wal_level',
      'max_connections',
      'work_mem',
    ]) {
      const r = await c.query<{ v: string }>(`select current_setting('${s}') as v`);
      out[s] = r.rows[0]?.v ?? 'unknown';
    }
    return out;
  });
}
