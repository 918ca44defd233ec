/**
 * `roundtable logs <task> [--attempt N] [--json]`: what an attempt printed,
 * as stored when it ended, written to stdout byte for byte (a cut output
 * carries its marker line in the text; nothing is added, not even a final
 * newline). Through the running node's API when one holds this data
 * directory (`GET /api/tasks/:id`, then the attempt's `output.txt`),
 * otherwise from the rows as the admin (the same reads with `actor` null);
 * the same bytes either way. An attempt with no stored output is exit 9
 * with why on stderr (src/cli/outputAttempt.ts), never an empty success.
 */
import type { OutputPage, TaskAttemptDetail, TaskDetail } from '../../board/boardPort.js';
import { type Db, getTaskOutput, getTaskRecord, readOutputPieces } from '../../db/index.js';
import type { CommandContext } from '../commandContext.js';
import { type CommandRoute, commandRoute } from '../commandRoute.js';
import { CliError, EXIT, type ExitCode } from '../exitCodes.js';
import { nodeBytes, nodeRequest } from '../nodeApi.js';
import { describeStore } from '../openStore.js';
import { attemptNumber, chosenAttempt, mayHaveOutput, whyNoOutput } from '../outputAttempt.js';
import { withTaskRows } from '../rowsStore.js';
import { readTask } from './show.js';

/** `logs --json`'s answer: the attempt, and its stored output whole. */
export interface AttemptLog {
  taskId: string;
  sessionId: string;
  attempt: number;
  status: string;
  /** Size of the whole output the run wrote, in bytes (more than `text` holds when cut). */
  totalBytes: number;
  /** True when `text` holds only the output's tail, behind a marker line. */
  truncated: boolean;
  text: string;
}

/** What `logs` writes: the output's bytes as stored (whole, or piece by piece), or its JSON line. */
type Answer = Uint8Array | AsyncIterable<Uint8Array> | AttemptLog;

export async function runLogs(ctx: CommandContext): Promise<ExitCode> {
  // The flag is checked before anything is read: a typo is a usage error, whatever the task.
  const wanted = attemptNumber(ctx.flags['--attempt']);
  const json = ctx.flags['--json'] === true;
  const taskId = ctx.positionals[0] ?? '';
  const route = commandRoute(ctx.config);
  if (route.kind === 'node') {
    await write(ctx, await viaNode(ctx, route, taskId, wanted, json));
  } else {
    // One store open for both reads (opening PGlite is the slow part), and the
    // output written while it is open: its pieces are read one at a time.
    await withTaskRows(ctx, taskId, { migrate: false }, async (db) =>
      write(ctx, await viaRows(ctx, db, taskId, wanted, json)),
    );
  }
  return EXIT.ok;
}

async function write(ctx: CommandContext, answer: Answer): Promise<void> {
  const out = ctx.io.stdout;
  if (answer instanceof Uint8Array) {
    out.write(answer);
  } else if (Symbol.asyncIterator in answer) {
    for await (const part of answer) out.write(part);
  } else {
    out.write(`${JSON.stringify(answer)}\n`);
  }
}

/** The attempt `wanted` names, or exit 9 saying why it has no output to read yet. */
function attemptWithOutput(detail: TaskDetail, wanted: number | undefined): TaskAttemptDetail {
  const attempt = chosenAttempt(detail, wanted);
  if (!mayHaveOutput(attempt.status)) throw noOutput(detail.taskId, attempt);
  return attempt;
}

function noOutput(taskId: string, attempt: TaskAttemptDetail): CliError {
  return new CliError('CLI_NO_OUTPUT', whyNoOutput(taskId, attempt));
}

function attemptLog(
  detail: TaskDetail,
  a: TaskAttemptDetail,
  output: Pick<AttemptLog, 'totalBytes' | 'truncated' | 'text'>,
): AttemptLog {
  return {
    taskId: detail.taskId,
    sessionId: a.sessionId,
    attempt: a.attempt,
    status: a.status,
    totalBytes: output.totalBytes,
    truncated: output.truncated,
    text: output.text,
  };
}

async function viaRows(
  ctx: CommandContext,
  db: Db,
  taskId: string,
  wanted: number | undefined,
  json: boolean,
): Promise<Answer> {
  const detail = await getTaskRecord(db, { actor: null, taskId });
  if (detail === null) {
    throw new CliError('CLI_NOT_FOUND', `no task ${taskId} in ${describeStore(ctx.config)}`);
  }
  const a = attemptWithOutput(detail, wanted);
  // As the admin, as the node's routes read it: the filter is the task, not a user.
  const ref = { actor: null, taskId: detail.taskId, sessionId: a.sessionId };
  if (json) {
    const output = await getTaskOutput(db, ref);
    if (output === null) throw noOutput(detail.taskId, a);
    return attemptLog(detail, a, output);
  }
  const parts = await readOutputPieces(db, ref);
  if (parts === null) throw noOutput(detail.taskId, a);
  return parts;
}

/** UTF-8 as stored; a leading U+FEFF the run printed is text, not a byte-order mark to drop. */
const utf8 = new TextDecoder('utf-8', { ignoreBOM: true });

async function viaNode(
  ctx: CommandContext,
  route: Extract<CommandRoute, { kind: 'node' }>,
  taskId: string,
  wanted: number | undefined,
  json: boolean,
): Promise<Answer> {
  const detail = await readTask(ctx, taskId, route);
  const a = attemptWithOutput(detail, wanted);
  const path = `/api/tasks/${encodeURIComponent(detail.taskId)}/sessions/${encodeURIComponent(a.sessionId)}/output`;
  const bytes = await nodeBytes(route.url, route.tokens.admin, `${path}.txt`);
  if (bytes === null) throw noOutput(detail.taskId, a);
  if (!json) return bytes;
  // The download is the text; its size and cut are on a page (one line is the cheapest).
  const page = await nodeRequest<OutputPage>(
    route.url,
    route.tokens.admin,
    'GET',
    `${path}?count=1`,
  );
  return attemptLog(detail, a, { ...page, text: utf8.decode(bytes) });
}
