/**
 * A command's work on the rows themselves, when no node holds the data
 * directory: the store opened for that one piece of work and closed after
 * it, whatever happens, and a store without the schema named as such.
 */
import { existsSync } from 'node:fs';
import { errorCode } from '../common/errorCode.js';
import type { Db } from '../db/index.js';
import type { CliConfig } from './cliConfig.js';
import type { CommandContext } from './commandContext.js';
import { CliError } from './exitCodes.js';
import { describeStore, openStore, pgliteDir } from './openStore.js';

/**
 * Whether there are rows to read: Postgres always (the server says), PGlite
 * once its directory exists (opening it would create an empty store).
 */
export function rowsExist(config: Pick<CliConfig, 'dataDir' | 'databaseUrl'>): boolean {
  return config.databaseUrl !== undefined || existsSync(pgliteDir(config));
}

/**
 * Runs `work` on the configured store. `migrate: false` (reads) leaves the
 * schema as it is and says `run roundtable migrate` when there is none;
 * writes bring it up to date first, as `enqueue` does.
 */
export async function withRows<T>(
  ctx: Pick<CommandContext, 'config' | 'progress'>,
  options: { migrate: boolean },
  work: (db: Db) => Promise<T>,
): Promise<T> {
  const { handle } = await openStore(ctx.config, ctx.progress, { migrate: options.migrate });
  try {
    return await work(handle.db);
  } catch (error) {
    if (errorCode(error) === '42P01') {
      throw new CliError(
        'CLI_STORE',
        `${describeStore(ctx.config)} has no schema yet: run \`roundtable migrate\``,
        { cause: error },
      );
    }
    throw error;
  } finally {
    await handle.close();
  }
}

/**
 * `withRows` for a command that names a task: with no rows at all (a PGlite
 * directory never created) there is no such task, and nothing is created.
 */
export async function withTaskRows<T>(
  ctx: Pick<CommandContext, 'config' | 'progress'>,
  taskId: string,
  options: { migrate: boolean },
  work: (db: Db) => Promise<T>,
): Promise<T> {
  if (!rowsExist(ctx.config)) {
    throw new CliError('CLI_NOT_FOUND', `no task ${taskId} in ${describeStore(ctx.config)}`);
  }
  return withRows(ctx, options, work);
}
