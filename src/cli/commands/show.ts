/**
 * `roundtable show <task>`: a task as its job page shows it, every attempt
 * with why it ended. Through the running node's API when one holds this
 * data directory, otherwise from the rows; the same `TaskDetail` either way.
 */
import type { TaskDetail } from '../../board/boardPort.js';
import { getTaskRecord } from '../../db/index.js';
import type { CommandContext } from '../commandContext.js';
import { type CommandRoute, commandRoute } from '../commandRoute.js';
import { CliError, EXIT, type ExitCode } from '../exitCodes.js';
import { nodeRequest } from '../nodeApi.js';
import { describeStore } from '../openStore.js';
import { withTaskRows } from '../rowsStore.js';
import { formatTaskDetail } from '../taskReport.js';

/**
 * The task `taskId` as the admin sees it, or `CLI_NOT_FOUND`. `route` is
 * the caller's when it reads more after the task (`logs`), so both reads go
 * the same way.
 */
export async function readTask(
  ctx: CommandContext,
  taskId: string,
  route: CommandRoute = commandRoute(ctx.config),
): Promise<TaskDetail> {
  if (route.kind === 'node') {
    return nodeRequest<TaskDetail>(
      route.url,
      route.tokens.admin,
      'GET',
      `/api/tasks/${encodeURIComponent(taskId)}`,
    );
  }
  const detail = await withTaskRows(ctx, taskId, { migrate: false }, (db) =>
    getTaskRecord(db, { actor: null, taskId }),
  );
  if (detail === null) {
    throw new CliError('CLI_NOT_FOUND', `no task ${taskId} in ${describeStore(ctx.config)}`);
  }
  return detail;
}

export async function runShow(ctx: CommandContext): Promise<ExitCode> {
  const detail = await readTask(ctx, ctx.positionals[0] ?? '');
  ctx.io.stdout.write(
    ctx.flags['--json'] === true ? `${JSON.stringify(detail)}\n` : `${formatTaskDetail(detail)}\n`,
  );
  return EXIT.ok;
}
