/** `roundtable status`: the line, the runners and per-user counts. */
import type { LineStatusRows } from '../../db/index.js';
import type { CommandContext } from '../commandContext.js';
import { commandRoute } from '../commandRoute.js';
import { EXIT, type ExitCode } from '../exitCodes.js';
import { nodeRequest } from '../nodeApi.js';
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
  // On Postgres the rows are as near as any node; a PGlite directory a node holds is its alone.
  if (config.databaseUrl === undefined) {
    const route = commandRoute(config);
    if (route.kind === 'node') {
      // It reads the rows with the same queries.
      const rows = await nodeRequest<LineStatusRows>(
        route.url,
        route.tokens.admin,
        'GET',
        '/api/admin/status',
      );
      return fromLineStatus(`node in process ${route.pid} at ${route.url}`, rows, config.caps);
    }
    if (!rowsExist(config)) {
      return summarize(`${describeStore(config)} (not created yet)`, [], new Map(), config.caps);
    }
  }
  return withRows(ctx, { migrate: false }, (db) =>
    readStatus(db, `rows of ${describeStore(config)}`, config.caps),
  );
}
