/**
 * The job page's routes: a task with every attempt, and an attempt's stored
 * output, paged by lines or whole as a download. What a user may read is
 * decided by the port's query (the user filter is in the SQL); another
 * user's task answers 404 like a missing one, so ids do not leak.
 */
import type { ServerResponse } from 'node:http';
import { z } from 'zod';
import type { BoardCommands, OutputPage, StoredOutput } from '../board/boardPort.js';
import { firstIssue } from '../common/firstIssue.js';
import type { SupervisorClock } from '../supervisor/clock.js';

/** Most lines one output page holds. */
export const MAX_OUTPUT_PAGE_LINES = 5000;
/** Lines in a page when the request names no count. */
export const DEFAULT_OUTPUT_PAGE_LINES = 1000;

const pageQuery = z.strictObject({
  from: z.coerce.number().int().min(0).optional(),
  count: z.coerce.number().int().min(1).max(MAX_OUTPUT_PAGE_LINES).optional(),
});

/** A refusal the API answers as `{ error }` with this status. */
export interface RouteRefusal {
  status: number;
  code: string;
  message: string;
}

/** Query parameters for an output page, or why they are refused. */
export function parsePageQuery(
  search: URLSearchParams,
): { from: number | undefined; count: number } | RouteRefusal {
  const parsed = pageQuery.safeParse(Object.fromEntries(search));
  if (!parsed.success) {
    const { field, message } = firstIssue(parsed.error, 'query');
    return { status: 400, code: 'bad_request', message: `${field}: ${message}` };
  }
  return { from: parsed.data.from, count: parsed.data.count ?? DEFAULT_OUTPUT_PAGE_LINES };
}

/**
 * Lines `from`..`from + count` of `text`; without `from`, the last `count`
 * lines (a log is read from its end). A final newline ends the last line
 * rather than starting an empty one.
 *
 * @example
 * ```ts
 * const out = { text: 'a\nb\nc\n', totalBytes: 6, truncated: false }
 * outputPage('s1', out, 1, 5) // => { sessionId: 's1', from: 1, lines: ['b', 'c'], totalLines: 3, totalBytes: 6, truncated: false }
 * outputPage('s1', out, undefined, 2).lines // => ['b', 'c']
 * outputPage('s1', { ...out, text: '' }, undefined, 2).totalLines // => 0
 * ```
 */
export function outputPage(
  sessionId: string,
  output: StoredOutput,
  from: number | undefined,
  count: number,
): OutputPage {
  const all = output.text === '' ? [] : output.text.replace(/\n$/, '').split('\n');
  const start = from ?? Math.max(0, all.length - count);
  return {
    sessionId,
    from: start,
    lines: all.slice(start, start + count),
    totalLines: all.length,
    totalBytes: output.totalBytes,
    truncated: output.truncated,
  };
}

/** A file name for a download: the ids and nothing a header could be broken with. */
export function downloadName(taskId: string, sessionId: string): string {
  return `${taskId}-${sessionId}.log`.replace(/[^A-Za-z0-9_.-]/g, '_');
}

/** Which attempt's output a route reads, as whom (null: the admin). */
export interface OutputTarget {
  viewer: string | null;
  taskId: string;
  sessionId: string;
}

/**
 * A page of the output: from the port's paged read when it has one (it
 * reads only what the page needs), else cut from the whole text. Null when
 * there is no such output.
 */
export async function readPage(
  commands: BoardCommands,
  t: OutputTarget,
  range: { from: number | undefined; count: number },
): Promise<OutputPage | null> {
  if (commands.taskOutputPage !== undefined) {
    return commands.taskOutputPage(t.viewer, t.taskId, t.sessionId, range);
  }
  const output = await commands.taskOutput?.(t.viewer, t.taskId, t.sessionId);
  return output == null ? null : outputPage(t.sessionId, output, range.from, range.count);
}

/** Resolves when `res` may take more, or has closed (a client that left). */
/** How long a download waits for its client to take the last part before it gives up on it. */
export const DOWNLOAD_STALL_MS = 30_000;

/** The timers a download's stall deadline runs on. */
export type StallClock = Pick<SupervisorClock, 'setTimeout' | 'clearTimeout'>;

/**
 * True once the socket took what was written; false when it closed, or
 * took nothing for `DOWNLOAD_STALL_MS` (a client that stopped reading
 * would otherwise hold its user's output-read place for as long as its
 * socket stays open).
 */
function drained(res: ServerResponse, clock: StallClock): Promise<boolean> {
  return new Promise((resolve) => {
    const done = (ok: boolean) => () => {
      clock.clearTimeout(timer);
      res.off('drain', took);
      res.off('close', closed);
      resolve(ok);
    };
    const took = done(true);
    const closed = done(false);
    const timer = clock.setTimeout(closed, DOWNLOAD_STALL_MS);
    res.on('drain', took);
    res.on('close', closed);
  });
}

/**
 * Sends the whole output as a text download, part by part as the port
 * reads it (at most 1 MiB a read), waiting for the socket to take each
 * part: neither the store nor the thread is held for the whole output, and
 * a slow reader holds no more than a part in memory. False when there is
 * no such output (nothing is sent).
 */
export async function sendDownload(
  res: ServerResponse,
  commands: BoardCommands,
  t: OutputTarget,
  clock: StallClock,
): Promise<boolean> {
  let parts: AsyncIterable<Uint8Array> | null;
  if (commands.taskOutputBytes !== undefined) {
    parts = await commands.taskOutputBytes(t.viewer, t.taskId, t.sessionId);
  } else {
    const output = await commands.taskOutput?.(t.viewer, t.taskId, t.sessionId);
    parts = output == null ? null : wholeText(output);
  }
  if (parts === null) return false;
  res.writeHead(200, {
    'content-type': 'text/plain; charset=utf-8',
    'content-disposition': `attachment; filename="${downloadName(t.taskId, t.sessionId)}"`,
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
  });
  for await (const part of parts) {
    if (res.destroyed) break;
    if (!res.write(part) && !(await drained(res, clock))) {
      res.destroy();
      break;
    }
  }
  res.end();
  return true;
}

async function* wholeText(output: StoredOutput): AsyncIterable<Uint8Array> {
  yield Buffer.from(output.text, 'utf8');
}

/** The port's job reads, or a refusal when the source has none. */
export function jobReads(
  commands: BoardCommands,
): Required<Pick<BoardCommands, 'taskDetail' | 'taskOutput'>> | RouteRefusal {
  const { taskDetail, taskOutput } = commands;
  if (taskDetail === undefined || taskOutput === undefined) {
    return { status: 404, code: 'not_found', message: 'this server has no job pages' };
  }
  return { taskDetail: taskDetail.bind(commands), taskOutput: taskOutput.bind(commands) };
}
