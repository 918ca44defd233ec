/**
 * `roundtable cancel <task>`: ends the task's current attempt, as the admin.
 * Through the running node when one holds this data directory: it cancels
 * a queued attempt, and a running one too (the row first, then it stops the
 * container). From the rows, with no node here: a queued attempt only; a
 * running one has a container only a node can stop, so it is refused with
 * where to cancel it instead.
 */
import type { CommandContext } from '../commandContext.js';
import { commandRoute } from '../commandRoute.js';
import { CliError, EXIT, type ExitCode } from '../exitCodes.js';
import { latestAttempt } from '../latestAttempt.js';
import { nodeRequest } from '../nodeApi.js';
import { withTaskRows } from '../rowsStore.js';
import { appliedOrExit, rowsTick } from '../rowsTick.js';

/** The reason the card shows: the CLI acts as the admin, as the node's API does for it. */
const REASON = 'cancelled by admin';

export async function runCancel(ctx: CommandContext): Promise<ExitCode> {
  const taskId = ctx.positionals[0] ?? '';
  const route = commandRoute(ctx.config);
  let via: string;
  if (route.kind === 'node') {
    await nodeRequest<undefined>(
      route.url,
      route.tokens.admin,
      'POST',
      `/api/tasks/${encodeURIComponent(taskId)}/cancel`,
    );
    via = `node at ${route.url}`;
  } else {
    await withTaskRows(ctx, taskId, { migrate: true }, async (db) => {
      const last = await latestAttempt(db, taskId);
      if (last.status === 'running') {
        throw new CliError(
          'CLI_CONFLICT',
          `task ${taskId} is running (under ${last.owner ?? 'no owner'}); a running task's container is stopped by a node: ` +
            'cancel it on the board or through the API of a running node (start one on this data directory and it adopts the run first)',
        );
      }
      if (last.status !== 'queued') {
        throw new CliError('CLI_CONFLICT', `task ${taskId} is ${last.status}: nothing to cancel`);
      }
      const outcome = await rowsTick(db, ctx.config, {
        op: 'cancel',
        ref: '1',
        sessionId: last.id,
        expected: { status: 'queued', epoch: last.epoch },
        reason: REASON,
        column: 'failed',
      });
      appliedOrExit(outcome, `task ${taskId}`);
    });
    via = 'rows';
  }
  ctx.io.stdout.write(
    ctx.flags['--json'] === true
      ? `${JSON.stringify({ taskId, cancelled: true, via })}\n`
      : `${taskId}: cancelled (via ${via})\n`,
  );
  return EXIT.ok;
}
