/**
 * The attempt of a task a `cancel` or `retry` through the rows acts on: its
 * latest, read with the status and epoch the tick's compare-and-set expects.
 * A malformed id names no task, as the node's API answers it.
 */
import { type Db, listSessionsForTask, type Session, ValidationError } from '../db/index.js';
import { CliError } from './exitCodes.js';

export async function latestAttempt(db: Db, taskId: string): Promise<Session> {
  let sessions: Session[];
  try {
    sessions = await listSessionsForTask(db, taskId);
  } catch (error) {
    if (error instanceof ValidationError) {
      throw new CliError('CLI_NOT_FOUND', `no task ${taskId}`, { cause: error });
    }
    throw error;
  }
  const last = sessions.at(-1);
  if (last === undefined) throw new CliError('CLI_NOT_FOUND', `no task ${taskId}`);
  return last;
}
