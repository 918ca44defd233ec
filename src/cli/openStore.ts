/**
 * Opens the configured store (Postgres when `databaseUrl` is set, else PGlite
 * under `<dataDir>/pgdata`) and brings its schema up to date, with a progress
 * line: PGlite's first start runs initdb, which takes seconds.
 */
import { join } from 'node:path';
import {
  ConnectError,
  connect,
  type DbHandle,
  MigrationError,
  migrate,
  POOLER_REFUSAL,
  PooledSessionError,
} from '../db/index.js';
import type { CliConfig } from './cliConfig.js';
import { CliError } from './exitCodes.js';
import { type ProgressOptions, withProgress } from './withProgress.js';

/** Where PGlite keeps its files under the data directory. */
export function pgliteDir(config: Pick<CliConfig, 'dataDir'>): string {
  return join(config.dataDir, 'pgdata');
}

/**
 * Where the store is, for messages (never the password of a URL).
 *
 * @example
 * ```ts
 * describeStore({ dataDir: 'd', databaseUrl: 'postgres://u:secret@db:6432/rt' }) // => 'Postgres at db:6432/rt'
 * describeStore({ dataDir: 'd', databaseUrl: 'postgres://db:6432/rt', pooler: 'transaction' }) // => 'Postgres at db:6432/rt, through a transaction pooler'
 * ```
 */
export function describeStore(
  config: Pick<CliConfig, 'dataDir' | 'databaseUrl'> & Partial<Pick<CliConfig, 'pooler'>>,
): string {
  if (config.databaseUrl === undefined) return `PGlite at ${pgliteDir(config)}`;
  const through = config.pooler === 'transaction' ? ', through a transaction pooler' : '';
  try {
    const url = new URL(config.databaseUrl);
    return `Postgres at ${url.host}${url.pathname}${through}`;
  } catch {
    return `Postgres (unparsable URL)${through}`;
  }
}

/** Connects and migrates; errors become `CLI_STORE` with the driver's error as cause. */
export async function openStore(
  config: Pick<CliConfig, 'dataDir' | 'databaseUrl' | 'pooler'>,
  progress: ProgressOptions,
  options: { migrate?: boolean; onPoolError?: (error: Error) => void } = {},
): Promise<{ handle: DbHandle; applied: number[]; current: number }> {
  if (config.pooler === 'transaction' && config.databaseUrl === undefined)
    throw new CliError(
      'CLI_CONFIG',
      '--pooler transaction needs --database-url: PGlite runs in this process, with no pooler before it',
    );
  const where = describeStore(config);
  let handle: DbHandle;
  try {
    handle = await withProgress(
      `opening ${where}`,
      () =>
        connect(
          config.databaseUrl !== undefined
            ? {
                databaseUrl: config.databaseUrl,
                pooler: config.pooler,
                ...(options.onPoolError ? { onPoolError: options.onPoolError } : {}),
              }
            : { dataDir: pgliteDir(config) },
        ),
      progress,
    );
  } catch (error) {
    if (error instanceof ConnectError) {
      const cause = causeText(error);
      throw new CliError('CLI_STORE', `${error.summary}: ${cause}${poolerHint(cause, config)}`, {
        cause: error,
      });
    }
    throw error;
  }
  if (options.migrate === false) return { handle, applied: [], current: 0 };
  try {
    const result = await withProgress(
      'migrating',
      () => migrate(handle.db),
      progress,
      (r) =>
        r.applied.length === 0
          ? `schema current (version ${r.current})`
          : `applied ${r.applied.join(', ')}; now at version ${r.current}`,
    );
    return { handle, ...result };
  } catch (error) {
    await handle.close();
    if (error instanceof MigrationError) {
      throw new CliError('CLI_STORE', error.message, { cause: error });
    }
    throw error;
  }
}

/**
 * What to do when a pooler refused the node's startup settings: the one
 * refusal a new user behind PgBouncer meets first.
 *
 * @example
 * ```ts
 * poolerHint('unsupported startup parameter: statement_timeout', { pooler: 'none' }) // => '; behind PgBouncer in transaction mode, start with --pooler transaction (docs/operations.md)'
 * poolerHint('unsupported startup parameter: statement_timeout', { pooler: 'transaction' }) // => ''
 * poolerHint('connect ECONNREFUSED 127.0.0.1:5432', { pooler: 'none' }) // => ''
 * ```
 */
export function poolerHint(cause: string, config: Partial<Pick<CliConfig, 'pooler'>>): string {
  return config.pooler !== 'transaction' && POOLER_REFUSAL.test(cause) ? POOLER_HINT : '';
}

/**
 * The node's refusal when its connections are not sessions of their own
 * (`PooledSessionError`: a transaction pooler that accepts the startup
 * settings), worded for the CLI; any other error as it is.
 *
 * @example
 * ```ts
 * sessionRefusal(new PooledSessionError(5000, 20)).message // => 'a connection of this node is not a session of its own: none of 20 notifications sent from another connection reached its LISTEN within 5000 ms (a transaction pooler that accepts the startup settings?); behind PgBouncer in transaction mode, start with --pooler transaction (docs/operations.md)'
 * sessionRefusal(new Error('boom')).message // => 'boom'
 * ```
 */
export function sessionRefusal(error: unknown): unknown {
  return error instanceof PooledSessionError
    ? new CliError('CLI_STORE', `${error.summary}${POOLER_HINT}`, { cause: error })
    : error;
}

/**
 * Where a running node's store says what went wrong with a connection of its
 * own: in the node's log, not as a process warning on stderr beside it. A
 * listener or lock that connected again to something that is not a session
 * (a pooler behind the same address since) is the operator's to fix and
 * stops the node granting: an error, in the CLI's words. Anything else (a
 * listener or lock that lost its connection and tries again, an idle pooled
 * connection gone) is a warning with the driver's error.
 */
export function storeErrorsTo(log: {
  error(fields: object, message: string): void;
  warn(fields: object, message: string): void;
}): (error: Error) => void {
  return (error) => {
    if (!(error instanceof PooledSessionError)) {
      log.warn({ err: error }, `a store connection of this node: ${error.message}`);
      return;
    }
    log.error(
      { code: error.code },
      `${error.summary}: this node's listener and locks stay lost (it polls, takes no grants and does not lead) until they reach a session again${POOLER_HINT}`,
    );
  };
}

const POOLER_HINT =
  '; behind PgBouncer in transaction mode, start with --pooler transaction (docs/operations.md)';

function causeText(error: Error): string {
  const cause = error.cause;
  return cause instanceof Error ? cause.message : String(cause ?? 'unknown cause');
}
