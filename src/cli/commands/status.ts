/** `roundtable status`: the line, the runners and per-user counts. */
import type { LineStatusRows } from '../../db/index.js';
import { loadBoardTokens } from '../boardTokens.js';
import type { CommandContext } from '../commandContext.js';
import { CliError, EXIT, type ExitCode } from '../exitCodes.js';
import { nodeRequest } from '../nodeApi.js';
import { readLiveNode } from '../nodeFile.js';
import { describeStore } from '../openStore.js';
import { rowsExist, withRows } from '../rowsStore.js';
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
    if (!rowsExist(config)) {
      return summarize(`${describeStore(config)} (not created yet)`, [], new Map(), config.caps);
    }
  }
  return withRows(ctx, { migrate: false }, (db) =>
    readStatus(db, `rows of ${describeStore(config)}`, config.caps),
  );
}
