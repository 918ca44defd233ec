/**
 * `roundtable retry <task>`: a new attempt of a failed or cancelled task, at
 * the back of its user's line, as the admin (the board's Retry). Through the
 * running node when one holds this data directory, otherwise into the rows
 * (the next start, or a node on the same Postgres, runs it). Prints the new
 * attempt's place in line.
 */
import { newId } from '../../db/index.js';
import type { CommandContext } from '../commandContext.js';
import { commandRoute } from '../commandRoute.js';
import { CliError, EXIT, type ExitCode } from '../exitCodes.js';
import { latestAttempt } from '../latestAttempt.js';
import { nodeRequest } from '../nodeApi.js';
import { placeInLine } from '../placeInLine.js';
import { withTaskRows } from '../rowsStore.js';
import { appliedOrExit, rowsTick } from '../rowsTick.js';

export async function runRetry(ctx: CommandContext): Promise<ExitCode> {
  const taskId = ctx.positionals[0] ?? '';
  const route = commandRoute(ctx.config);
  let result: { taskId: string; sessionId: string; position: number; via: string };
  if (route.kind === 'node') {
    const made = await nodeRequest<{ sessionId: string; position: number }>(
      route.url,
      route.tokens.admin,
      'POST',
      `/api/tasks/${encodeURIComponent(taskId)}/retry`,
    );
    result = { taskId, ...made, via: `node at ${route.url}` };
  } else {
    result = await withTaskRows(ctx, taskId, { migrate: true }, async (db) => {
      const last = await latestAttempt(db, taskId);
      if (last.status !== 'failed' && last.status !== 'cancelled') {
        throw new CliError(
          'CLI_CONFLICT',
          `task ${taskId} is ${last.status}: only a failed or cancelled task is retried`,
        );
      }
      const outcome = await rowsTick(db, ctx.config, {
        op: 'retry',
        ref: '1',
        taskId,
        actor: null,
        sessionId: newId('session'),
        expected: { sessionId: last.id, status: last.status, epoch: last.epoch },
      });
      const done = appliedOrExit(outcome, `task ${taskId}`);
      return { taskId, sessionId: done.session.id, position: done.position ?? 0, via: 'rows' };
    });
  }
  ctx.io.stdout.write(
    ctx.flags['--json'] === true
      ? `${JSON.stringify(result)}\n`
      : `${taskId}: a new attempt, ${placeInLine(result.position)} (via ${result.via})\n`,
  );
  return EXIT.ok;
}
