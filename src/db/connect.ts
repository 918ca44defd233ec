/**
 * Opens the store. One code path for both engines: kysely's stock
 * `PostgresDialect` over a `pg.Pool`, pointed either at a Postgres server or,
 * through `createPgConfig`, at an embedded PGlite. The embedded default lives
 * on disk (`./.roundtable/pgdata`): a queue that forgets itself on restart
 * would break rule 1. `memory://` only when a caller asks (tests).
 */
import { mkdirSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import { createPgConfig } from '@electric-sql/pglite/node-postgres';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { ConnectError, ValidationError } from './errors.js';
import type { Database } from './schema.js';

export type Engine = 'postgres' | 'pglite';

export interface ConnectOptions {
  /** A Postgres URL. When set, the server is used and PGlite is not loaded. */
  databaseUrl?: string;
  /** PGlite data directory; `memory://` for a throwaway store. */
  dataDir?: string;
  /**
   * An already open PGlite to use instead of opening `dataDir`. The caller
   * owns it: `close()` leaves it open. Used by tests to share one instance.
   */
  pglite?: PGlite;
  /** Server pool size. PGlite always uses one connection (it has one backend). */
  poolMax?: number;
  /** Deadline for getting a server connection, in ms. */
  connectTimeoutMs?: number;
  /** Errors of idle pooled connections (a server restart); default: a process warning. */
  onPoolError?: (error: Error) => void;
}

/** An open store. */
export interface DbHandle {
  db: Kysely<Database>;
  engine: Engine;
  /** Closes the pool, and PGlite if this handle opened it. Idempotent. */
  close(): Promise<void>;
}

/** Defaults, spread under the caller's options. */
export const CONNECT_DEFAULTS = {
  dataDir: './.roundtable/pgdata',
  poolMax: 10,
  connectTimeoutMs: 10_000,
} as const;

const KNOWN_OPTIONS = [
  'databaseUrl',
  'dataDir',
  'pglite',
  'poolMax',
  'connectTimeoutMs',
  'onPoolError',
] as const;

/**
 * Opens the store and checks it answers. Throws `ValidationError` for an
 * unknown option (with a suggestion) and `ConnectError`, with the driver's
 * error as `cause`, when the engine cannot be reached or opened. Does not
 * migrate: call `migrate(handle.db)`.
 */
export async function connect(options: ConnectOptions = {}): Promise<DbHandle> {
  rejectUnknownKeys(options);
  const o = { ...CONNECT_DEFAULTS, ...options };
  const onPoolError = o.onPoolError ?? ((error: Error) => process.emitWarning(error));

  let pool: pg.Pool;
  let owned: PGlite | undefined;
  let engine: Engine;
  if (o.databaseUrl !== undefined) {
    engine = 'postgres';
    pool = new pg.Pool({
      connectionString: o.databaseUrl,
      max: o.poolMax,
      connectionTimeoutMillis: o.connectTimeoutMs,
    });
  } else {
    engine = 'pglite';
    let instance = o.pglite;
    if (instance === undefined) {
      try {
        if (!o.dataDir.startsWith('memory://')) mkdirSync(o.dataDir, { recursive: true });
        instance = await PGlite.create(o.dataDir);
      } catch (error) {
        throw new ConnectError(`cannot open PGlite at ${o.dataDir}`, { cause: error });
      }
      owned = instance;
    }
    // One backend, nothing to reconnect to: keep the single client rather
    // than ending it after the default 10 s idle and rebuilding it.
    pool = new pg.Pool({ ...createPgConfig(instance), idleTimeoutMillis: 0 });
  }
  pool.on('error', onPoolError);

  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      await db.destroy();
      if (owned !== undefined && !owned.closed) await owned.close();
    })();
    return closing;
  };

  try {
    await pool.query('SELECT 1');
  } catch (error) {
    await close();
    throw new ConnectError(`cannot reach the ${engine} store`, { cause: error });
  }
  return { db, engine, close };
}

function rejectUnknownKeys(options: object): void {
  for (const key of Object.keys(options)) {
    if ((KNOWN_OPTIONS as readonly string[]).includes(key)) continue;
    const near = KNOWN_OPTIONS.find((k) => k.toLowerCase() === key.toLowerCase());
    const hint = near ?? KNOWN_OPTIONS.find((k) => k.startsWith(key.slice(0, 4)));
    throw new ValidationError(
      key,
      `unknown connect option${hint ? `; did you mean ${hint}?` : ''}`,
    );
  }
}
