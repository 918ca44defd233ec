/**
 * `roundtable logs`'s decisions, apart from its reads: which attempt the
 * command line names, and what to say when that attempt has no stored
 * output (an output is stored when a run ends, so an empty answer would
 * read as a run that printed nothing). Pure.
 */
import type { TaskAttemptDetail, TaskDetail } from '../board/boardPort.js';
import { CliError } from './exitCodes.js';
import { placeInLine } from './placeInLine.js';
import { endReason } from './taskReport.js';

/**
 * `--attempt`'s value: absent is the latest attempt (undefined); otherwise a
 * positive integer in decimal digits, or a usage error naming the flag.
 *
 * @example
 * ```ts
 * attemptNumber(undefined) // => undefined
 * attemptNumber('2') // => 2
 * attemptNumber('0') // throws CLI_USAGE
 * attemptNumber('1.5') // throws CLI_USAGE
 * attemptNumber('2x') // throws CLI_USAGE
 * attemptNumber('99999999999999999999') // throws CLI_USAGE
 * ```
 */
export function attemptNumber(flag: string | true | string[] | undefined): number | undefined {
  if (flag === undefined) return undefined;
  const n = typeof flag === 'string' && /^[0-9]+$/.test(flag) ? Number(flag) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < 1) {
    throw new CliError(
      'CLI_USAGE',
      `--attempt must be a positive integer (1 is the first attempt), not '${String(flag)}'`,
    );
  }
  return n;
}

/**
 * The attempt `n` of `detail`, or its latest when `n` is undefined;
 * `CLI_NOT_FOUND` when there is no such attempt, saying which there are.
 *
 * @example
 * ```ts
 * const a = (attempt: number) => ({ attempt, sessionId: `ses_${attempt}` });
 * chosenAttempt({ taskId: 'tsk_1', attempts: [a(1), a(2)] }, undefined).sessionId // => 'ses_2'
 * chosenAttempt({ taskId: 'tsk_1', attempts: [a(1), a(2)] }, 1).sessionId // => 'ses_1'
 * chosenAttempt({ taskId: 'tsk_1', attempts: [a(1), a(2)] }, 3) // throws CLI_NOT_FOUND
 * chosenAttempt({ taskId: 'tsk_1', attempts: [] }, undefined) // throws CLI_NOT_FOUND
 * ```
 */
export function chosenAttempt<A extends Pick<TaskAttemptDetail, 'attempt'>>(
  detail: Pick<TaskDetail, 'taskId'> & { attempts: readonly A[] },
  n: number | undefined,
): A {
  const found =
    n === undefined ? detail.attempts.at(-1) : detail.attempts.find((a) => a.attempt === n);
  if (found !== undefined) return found;
  const last = detail.attempts.at(-1)?.attempt;
  const has =
    last === undefined ? 'it has none' : last === 1 ? 'it has attempt 1' : `it has 1 to ${last}`;
  throw new CliError(
    'CLI_NOT_FOUND',
    n === undefined
      ? `task ${detail.taskId} has no attempt`
      : `task ${detail.taskId} has no attempt ${n}: ${has}`,
  );
}

/**
 * Whether an attempt in this status can have a stored output: only once it
 * ended. A queued or running one is answered by {@link whyNoOutput} without
 * asking for its output.
 *
 * @example
 * ```ts
 * mayHaveOutput('succeeded') // => true
 * mayHaveOutput('cancelled') // => true
 * mayHaveOutput('queued') // => false
 * mayHaveOutput('running') // => false
 * ```
 */
export function mayHaveOutput(status: string): boolean {
  return status !== 'queued' && status !== 'running';
}

/**
 * Why attempt `a` of `taskId` has no stored output, in one line for stderr:
 * still in line (with its place), running (its output is stored when it
 * ends; the board shows it live), or ended without any (and why it ended).
 *
 * @example
 * ```ts
 * const a = { attempt: 2, status: 'queued', position: 3, failureReason: null, events: [] };
 * whyNoOutput('tsk_1', a) // => 'tsk_1 attempt 2 has no output yet: it is queued, position 3 in line; its output is stored when it ends'
 * whyNoOutput('tsk_1', { ...a, position: null }) // => 'tsk_1 attempt 2 has no output yet: it is queued; its output is stored when it ends'
 * whyNoOutput('tsk_1', { ...a, status: 'running', position: 0 }) // => 'tsk_1 attempt 2 has no output yet: it is running, and its output is stored when it ends (the board shows it live)'
 * whyNoOutput('tsk_1', { ...a, status: 'cancelled', position: null, events: [{ reason: 'cancelled by admin' }] }) // => 'tsk_1 attempt 2 ended without output: cancelled (cancelled by admin)'
 * whyNoOutput('tsk_1', { ...a, status: 'failed', position: null, failureReason: 'owner_lost' }) // => 'tsk_1 attempt 2 ended without output: failed (owner_lost)'
 * whyNoOutput('tsk_1', { ...a, status: 'succeeded', position: null }) // => 'tsk_1 attempt 2 ended without output: succeeded'
 * ```
 */
export function whyNoOutput(
  taskId: string,
  a: Pick<TaskAttemptDetail, 'attempt' | 'status' | 'position' | 'failureReason'> & {
    events: ReadonlyArray<{ reason: string | null }>;
  },
): string {
  const which = `${taskId} attempt ${a.attempt}`;
  if (a.status === 'queued') {
    // A place of 0 or none is not a place in line: "queued" alone, never "granted".
    const place = a.position !== null && a.position > 0 ? placeInLine(a.position) : 'queued';
    return `${which} has no output yet: it is ${place}; its output is stored when it ends`;
  }
  if (a.status === 'running') {
    return `${which} has no output yet: it is running, and its output is stored when it ends (the board shows it live)`;
  }
  const why = endReason(a);
  return `${which} ended without output: ${a.status}${why === null ? '' : ` (${why})`}`;
}
