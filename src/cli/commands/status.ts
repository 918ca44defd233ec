/** `roundtable status`: the line, the runners and per-user counts. */
import { existsSync } from 'node:fs';
import { errorCode } from '../../common/errorCode.js';
import type { LineStatusRows } from '../../db/index.js';
import { loadBoardTokens } from '../boardTokens.js';
import type { CommandContext } from '../commandContext.js';
import { CliError, EXIT, type ExitCode } from '../exitCodes.js';
import { nodeRequest } from '../nodeApi.js';
import { readLiveNode } from '../nodeFile.js';
import { describeStore, openStore, pgliteDir } from '../openStore.js';
import {
  formatStatus,
  fromLineStatus,
  readStatus,
  type StatusReport,
  summarize,
} from '../statusReport.js';

export async function runStatus(ctx: CommandContext): Promise<ExitCode> {
  const report = await statusReport(ctx);
  ctx.io.stdout.write(
    ctx.flags['--json'] === true ? `${JSON.stringify(report)}\n` : `${formatStatus(report)}\n`,
  );
  return EXIT.ok;
}

async function statusReport(ctx: CommandContext): Promise<StatusReport> {
  const { config } = ctx;
  if (config.databaseUrl === undefined) {
    const live = readLiveNode(config.dataDir);
    if (live?.url) {
      // The node holds the PGlite directory; it reads the rows with the same queries.
      const tokens = loadBoardTokens(config.dataDir, config.tokens, []);
      const rows = await nodeRequest<LineStatusRows>(
        live.url,
        tokens.admin,
        'GET',
        '/api/admin/status',
      );
      return fromLineStatus(`node in process ${live.pid} at ${live.url}`, rows, config.caps);
    }
    if (live !== null) {
      throw new CliError(
        'CLI_IN_USE',
        `${config.dataDir} is held by process ${live.pid}, which is still starting`,
      );
    }
    if (!existsSync(pgliteDir(config))) {
      return summarize(`${describeStore(config)} (not created yet)`, [], new Map(), config.caps);
    }
  }
  const { handle } = await openStore(config, ctx.progress, { migrate: false });
  try {
    return await readStatus(handle.db, `rows of ${describeStore(config)}`, config.caps);
  } catch (error) {
    if (errorCode(error) === '42P01') {
      throw new CliError(
        'CLI_STORE',
        `${describeStore(config)} has no schema yet: run \`roundtable migrate\``,
        {
          cause: error,
        },
      );
    }
    throw error;
  } finally {
    await handle.close();
  }
}
