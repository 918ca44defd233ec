/** `roundtable migrate`: brings the schema up to date and says what it did. */
import type { CommandContext } from '../commandContext.js';
import { CliError, EXIT, type ExitCode } from '../exitCodes.js';
import { readLiveNode } from '../nodeFile.js';
import { openStore } from '../openStore.js';

export async function runMigrate(ctx: CommandContext): Promise<ExitCode> {
  const { config } = ctx;
  if (config.databaseUrl === undefined) {
    const live = readLiveNode(config.dataDir);
    if (live !== null) {
      throw new CliError(
        'CLI_IN_USE',
        `${config.dataDir} is in use by the node in process ${live.pid}, which migrated it when it started`,
      );
    }
  }
  const { handle, applied, current } = await openStore(config, ctx.progress);
  try {
    // Without --json the progress line (or its log record) already said what happened.
    if (ctx.flags['--json'] === true) {
      ctx.io.stdout.write(`${JSON.stringify({ applied, current })}\n`);
    }
  } finally {
    await handle.close();
  }
  return EXIT.ok;
}
