/**
 * The finish op a TaskRunner sends for how its run ended: an exit (done or
 * failed on its exit code), a give-up of the infrastructure (re-queued at the
 * head of the user's line), a start failure (re-queued or failed, as the
 * start-failure policy decided), or an exit whose output could not be read
 * back (finished on its exit code, never run again).
 */
import { cutWellFormed } from '../common/wellFormed.js';
import type { RunOutput } from '../containers/ContainerBackend.js';
import { isContainerError } from '../containers/ContainerError.js';
import { newId, type Session } from '../db/index.js';
import type { TickFinish } from '../db/tickTypes.js';
import type { ContainerRunError } from '../machines/containerRunTypes.js';
import type { RunnerOutcome } from '../machines/taskRunner.js';

/** What a run that could not start means for its session (src/machines/startFailurePolicy.ts decides). */
export type StartFailure =
  | { action: 'requeue'; reason: string }
  | { action: 'fail'; reason: string; userRecoverable: boolean };

const MAX_REASON = 1000;

/**
 * The finish op of `s` for `outcome`; `read` is the output as the backend
 * read it (stored uncut by us), if it was read.
 */
export function finishFor(
  s: Session,
  outcome: RunnerOutcome,
  read: RunOutput | undefined,
  onStartFailure: (error: ContainerRunError, session: Session) => StartFailure,
): Omit<TickFinish, 'ref'> {
  // Literals, not a spread of a shared base: a spread followed by more keys
  // takes V8's slow path, and this runs once per job.
  if (outcome.outcome === 'exited') {
    const ok = outcome.exitCode === 0;
    return {
      op: 'finish',
      sessionId: s.id,
      epoch: s.epoch,
      status: ok ? 'succeeded' : 'failed',
      exitCode: outcome.exitCode,
      // The command itself said no: running it again as is would say no
      // again. Only a give-up of the infrastructure is recoverable.
      reason: ok ? null : 'exit_code',
      userRecoverable: false,
      output: read ?? {
        text: outcome.output,
        totalBytes: Buffer.byteLength(outcome.output, 'utf8'),
        truncated: false,
      },
      column: ok ? 'done' : 'failed',
      requeue: null,
    };
  }
  const giveUp = (reason: string) => requeueFinish(s, reason);
  if (outcome.outcome === 'gave_up') return giveUp(outcome.reason);
  if (outcome.outcome === 'orphaned') return giveUp('owner_lost');
  // The marker was read, so the command ran to its end: only reading its
  // output back failed (its service removed right after the exit, the engine
  // not answering then). Not a start failure: running it again would run a
  // finished command twice, so the exit code is the answer.
  if (outcome.exitCode !== null) return unreadOutputFinish(s, outcome.exitCode, outcome.error);
  const decided = onStartFailure(outcome.error, s);
  if (decided.action === 'requeue') return giveUp(cutWellFormed(decided.reason, MAX_REASON));
  return {
    op: 'finish',
    sessionId: s.id,
    epoch: s.epoch,
    status: 'failed',
    exitCode: outcome.exitCode,
    reason: cutWellFormed(decided.reason, MAX_REASON),
    userRecoverable: decided.userRecoverable,
    output: null,
    column: 'failed',
    requeue: null,
  };
}

/**
 * The finish that fails a run for a reason of the infrastructure (its owner
 * died, its container was replaced) and queues its next attempt at the head
 * of its user's line: the runner's give-up and the Reconciler's recovery
 * write the same op.
 */
export function requeueFinish(s: Session, reason: string): Omit<TickFinish, 'ref'> {
  return {
    op: 'finish',
    sessionId: s.id,
    epoch: s.epoch,
    status: 'failed',
    exitCode: null,
    reason,
    userRecoverable: true,
    output: null,
    column: 'queued',
    requeue: { sessionId: newId('session') },
  };
}

/**
 * The finish of a run that exited with `exitCode` whose output could not be
 * read back: done or failed on its exit code, as any exit, with one line
 * saying why the output is missing in place of the output.
 */
export function unreadOutputFinish(
  s: Session,
  exitCode: number,
  error: ContainerRunError,
): Omit<TickFinish, 'ref'> {
  const cause = (error as { cause?: unknown }).cause;
  const why = isContainerError(cause) ? `${cause.code}: ${cause.message}` : error.message;
  const text = cutWellFormed(
    `[roundtable: the run exited with code ${exitCode}, but its output could not be read back (${why})]\n`,
    MAX_REASON,
  );
  const ok = exitCode === 0;
  return {
    op: 'finish',
    sessionId: s.id,
    epoch: s.epoch,
    status: ok ? 'succeeded' : 'failed',
    exitCode,
    reason: ok ? null : 'exit_code',
    userRecoverable: false,
    output: { text, totalBytes: Buffer.byteLength(text, 'utf8'), truncated: false },
    column: ok ? 'done' : 'failed',
    requeue: null,
  };
}
