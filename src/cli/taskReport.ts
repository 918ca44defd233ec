/**
 * `roundtable show`'s text: a task as its job page shows it (the same
 * `TaskDetail` the node's `GET /api/tasks/:id` answers and the rows give),
 * one line per attempt with why it ended. Pure.
 */

import type { TaskAttemptDetail, TaskDetail } from '../board/boardPort.js';
import { formatTimeLimit } from '../board/formatTimeLimit.js';
import { placeInLine } from './placeInLine.js';

/**
 * A command as a shell would take it back: words with spaces or quotes in
 * single quotes.
 *
 * @example
 * ```ts
 * shellWords(['sh', '-c', 'echo hi']) // => "sh -c 'echo hi'"
 * shellWords(['echo', "it's"]) // => "echo 'it'\\''s'"
 * shellWords(['true']) // => 'true'
 * shellWords(['echo', '']) // => "echo ''"
 * ```
 */
export function shellWords(command: readonly string[]): string {
  return command
    .map((w) => (/^[\w@%+=:,./-]+$/.test(w) ? w : `'${w.replaceAll("'", `'\\''`)}'`))
    .join(' ');
}

/**
 * Why an attempt ended, when it did not succeed: the failure's reason, or
 * the reason of the last status change (a cancel's).
 *
 * @example
 * ```ts
 * endReason({ status: 'failed', failureReason: 'owner_lost', events: [] }) // => 'owner_lost'
 * endReason({ status: 'cancelled', failureReason: null, events: [{ reason: 'cancelled by user' }] }) // => 'cancelled by user'
 * endReason({ status: 'succeeded', failureReason: null, events: [{ reason: 'exit 0' }] }) // => null
 * ```
 */
export function endReason(
  a: Pick<TaskAttemptDetail, 'status' | 'failureReason'> & {
    events: ReadonlyArray<{ reason: string | null }>;
  },
): string | null {
  if (a.status !== 'failed' && a.status !== 'cancelled') return null;
  return a.failureReason ?? a.events.at(-1)?.reason ?? null;
}

/**
 * When a running attempt's time limit stops it: its grant plus the limit;
 * null when it is not running or has no limit.
 *
 * @example
 * ```ts
 * stopsAt({ status: 'running', claimedAt: '2026-01-01T00:00:00.000Z' }, 1_800_000) // => '2026-01-01T00:30:00.000Z'
 * stopsAt({ status: 'running', claimedAt: '2026-01-01T00:00:00.000Z' }, undefined) // => null
 * stopsAt({ status: 'succeeded', claimedAt: '2026-01-01T00:00:00.000Z' }, 1_800_000) // => null
 * ```
 */
export function stopsAt(
  a: Pick<TaskAttemptDetail, 'status' | 'claimedAt'>,
  limitMs: number | undefined,
): string | null {
  if (a.status !== 'running' || a.claimedAt === null || limitMs === undefined) return null;
  return new Date(Date.parse(a.claimedAt) + limitMs).toISOString();
}

function attemptLine(a: TaskAttemptDetail, limitMs: number | undefined): string {
  const why = endReason(a);
  // A queued attempt says its place, as `enqueue` does ("queued, position 3 in line").
  const status =
    a.status === 'queued' && a.position !== null && a.position > 0
      ? placeInLine(a.position)
      : a.status;
  const parts = [
    `${a.attempt}. ${status}${why === null ? '' : ` (${why})`}`,
    ...(a.exitCode === null ? [] : [`exit ${a.exitCode}`]),
    `enqueued ${a.enqueuedAt}`,
    ...(a.startedAt === null ? [] : [`started ${a.startedAt}`]),
    ...(a.finishedAt === null ? [] : [`finished ${a.finishedAt}`]),
    ...(a.node === null ? [] : [`on ${a.node}`]),
  ];
  const stops = stopsAt(a, limitMs);
  if (stops !== null) parts.push(`stopped at its time limit ${stops} unless done before`);
  return `  ${parts.join(', ')}`;
}

/**
 * The task, then its attempts oldest first.
 *
 * @example
 * ```ts
 * const at = '2026-01-01T00:00:00.000Z';
 * const attempt = { sessionId: 'ses_1', attempt: 1, status: 'failed', position: null, enqueuedAt: at, claimedAt: at, startedAt: at, finishedAt: at, exitCode: null, failureReason: 'owner_lost', node: 'node-a@b1', backend: 'swarm', handle: 'svc', events: [] };
 * const queued = { ...attempt, sessionId: 'ses_2', attempt: 2, status: 'queued', position: 3, claimedAt: null, startedAt: null, finishedAt: null, failureReason: null, node: null };
 * const detail = { taskId: 'tsk_1', userId: 'ann', title: 'fix it', image: 'alpine:3.20', command: ['sh', '-c', 'echo hi'], envKeys: ['TOKEN'], createdAt: at, attempts: [attempt, queued] };
 * formatTaskDetail(detail).split('\n').slice(0, 5) // => ['tsk_1  fix it', '  user ann, created 2026-01-01T00:00:00.000Z', "  runs sh -c 'echo hi' in alpine:3.20, env TOKEN", '', 'attempts:']
 * formatTaskDetail(detail).split('\n')[5] // => '  1. failed (owner_lost), enqueued 2026-01-01T00:00:00.000Z, started 2026-01-01T00:00:00.000Z, finished 2026-01-01T00:00:00.000Z, on node-a@b1'
 * formatTaskDetail(detail).split('\n')[6] // => '  2. queued, position 3 in line, enqueued 2026-01-01T00:00:00.000Z'
 * formatTaskDetail({ ...detail, submitKey: 'deploy-42' }).split('\n')[1] // => '  user ann, created 2026-01-01T00:00:00.000Z, key deploy-42'
 * formatTaskDetail({ ...detail, timeLimitMs: 1_800_000 }).split('\n')[1] // => '  user ann, created 2026-01-01T00:00:00.000Z, time limit 30m'
 * const running = { ...queued, status: 'running', position: null, claimedAt: at, startedAt: at, node: 'node-a@b1' };
 * formatTaskDetail({ ...detail, attempts: [running], timeLimitMs: 1_800_000 }).split('\n')[5] // => '  2. running, enqueued 2026-01-01T00:00:00.000Z, started 2026-01-01T00:00:00.000Z, on node-a@b1, stopped at its time limit 2026-01-01T00:30:00.000Z unless done before'
 * ```
 */
export function formatTaskDetail(detail: TaskDetail): string {
  const env = detail.envKeys.length === 0 ? '' : `, env ${detail.envKeys.join(' ')}`;
  return [
    `${detail.taskId}  ${detail.title}`,
    `  user ${detail.userId}, created ${detail.createdAt}${detail.submitKey === undefined ? '' : `, key ${detail.submitKey}`}${detail.timeLimitMs === undefined ? '' : `, time limit ${formatTimeLimit(detail.timeLimitMs)}`}`,
    `  runs ${shellWords(detail.command)} in ${detail.image}${env}`,
    '',
    'attempts:',
    ...(detail.attempts.length === 0
      ? ['  (none)']
      : detail.attempts.map((a) => attemptLine(a, detail.timeLimitMs))),
  ].join('\n');
}
