/**
 * `roundtable cancel <task>`: ends the task's current attempt, as the admin.
 * Through the running node when one holds this data directory; from the
 * rows otherwise. Either way the row decides first (a compare-and-set on the
 * attempt's status and epoch), then a running attempt's container is
 * removed: by the node, or from here through the backend the row names
 * (removeRunContainer.ts), and when that cannot be done here, by the next
 * reconcile pass of any node.
 */
import { cancelFollowing } from '../../actors/runtimeCommands.js';
import type { CommandContext } from '../commandContext.js';
import { commandRoute } from '../commandRoute.js';
import { CliError, EXIT, type ExitCode } from '../exitCodes.js';
import { latestAttempt } from '../latestAttempt.js';
import { nodeRequest } from '../nodeApi.js';
import { type ContainerRemoval, removalLine, removeRunContainer } from '../removeRunContainer.js';
import { withTaskRows } from '../rowsStore.js';
import { appliedOrExit, rowsTick } from '../rowsTick.js';

/** The reason the card shows: the CLI acts as the admin, as the node's API does for it. */
const REASON = 'cancelled by admin';

export async function runCancel(ctx: CommandContext): Promise<ExitCode> {
  const taskId = ctx.positionals[0] ?? '';
  const route = commandRoute(ctx.config);
  let via: string;
  let removal: ContainerRemoval | undefined;
  if (route.kind === 'node') {
    await nodeRequest<undefined>(
      route.url,
      route.tokens.admin,
      'POST',
      `/api/tasks/${encodeURIComponent(taskId)}/cancel`,
    );
    via = `node at ${route.url}`;
  } else {
    const ran = await withTaskRows(ctx, taskId, { migrate: true }, async (db) => {
      const last = await latestAttempt(db, taskId);
      if (last.status !== 'queued' && last.status !== 'running') {
        throw new CliError('CLI_CONFLICT', `task ${taskId} is ${last.status}: nothing to cancel`);
      }
      // Another node's grant (or adoption) can come between the read and the
      // tick: the cancel follows the row, as a node's own cancel does.
      const { outcome, expected } = await cancelFollowing(
        { status: last.status, epoch: last.epoch },
        (at) =>
          rowsTick(db, ctx.config, {
            op: 'cancel',
            ref: '1',
            sessionId: last.id,
            expected: at,
            reason: REASON,
            column: 'failed',
          }),
      );
      const done = appliedOrExit(outcome, `task ${taskId}`);
      // The cancelled row names the run's container, if one was recorded by then.
      return expected.status === 'running' ? done.session : null;
    });
    // Off the store: the row is cancelled whatever becomes of the container.
    if (ran !== null) removal = await removeRunContainer(ctx.config, ran);
    via = 'rows';
  }
  const container = removal === undefined ? {} : { container: removal };
  ctx.io.stdout.write(
    ctx.flags['--json'] === true
      ? `${JSON.stringify({ taskId, cancelled: true, via, ...container })}\n`
      : `${taskId}: cancelled (via ${via})${removal === undefined ? '' : `; ${removalLine(removal)}`}\n`,
  );
  return EXIT.ok;
}
