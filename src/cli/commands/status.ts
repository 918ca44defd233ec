/** `roundtable status`: the line, the runners and per-user counts. */
import { existsSync } from 'node:fs';
import type { PoolSnapshot } from '../../board/boardPort.js';
import { loadBoardTokens } from '../boardTokens.js';
import type { CommandContext } from '../commandContext.js';
import { CliError, EXIT, type ExitCode } from '../exitCodes.js';
import { nodeRequest } from '../nodeApi.js';
import { readLiveNode } from '../nodeFile.js';
import { describeStore, openStore, pgliteDir } from '../openStore.js';
import { formatStatus, readStatus, type StatusReport, summarize } from '../statusReport.js';

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
      // The node holds the PGlite directory; its pool is an index over the same rows.
      const tokens = loadBoardTokens(config.dataDir, config.tokens, []);
      const pool = await nodeRequest<PoolSnapshot>(live.url, tokens.admin, 'GET', '/api/pool');
      return {
        source: `node in process ${live.pid} at ${live.url}`,
        maxRunning: pool.maxRunning,
        queued: pool.queued,
        running: pool.running,
        users: pool.users.map((u) => ({
          userId: u.userId,
          queued: u.queued,
          running: u.running,
          cap: u.maxRunning ?? config.caps.defaultUserCap,
          succeeded: null,
          failed: null,
          cancelled: null,
        })),
        head: [],
      };
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
    if ((error as { code?: string }).code === '42P01') {
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
