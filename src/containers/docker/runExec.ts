/**
 * A run's command as its owner watches it: the wrapper started with
 * `docker exec` in the session's container, its output decoded into the
 * run's tracker as it comes, and, once the exec's stream ends, the exit
 * marker read for its exit code. The marker, not the exec's own exit code,
 * is the run's answer: the wrapper writes it, and its absence says the
 * container died under the command (`exec_lost`).
 */
import { StringDecoder } from 'node:string_decoder';
import { ContainerError } from '../ContainerError.js';
import type { RunTracker } from '../RunTracker.js';
import { startExec } from './dockerExec.js';
import { type EngineCalls, readMarkerIn } from './wrapperFiles.js';

export interface RunExec {
  containerId: string;
  handle: string;
  sessionId: string;
  /** The wrapper's argv and env (wrapper.ts), the command inside them. */
  argv: readonly string[];
  env: Readonly<Record<string, string>>;
}

/**
 * Starts the run's exec within one engine call and resolves once the engine
 * accepted it; from then on `tracker` hears its output and, when it ends,
 * its exit or why there is none.
 */
export async function startRunExec(
  e: EngineCalls,
  run: RunExec,
  tracker: RunTracker,
): Promise<void> {
  const { containerId, handle } = run;
  const decoder = new StringDecoder('utf8');
  // The signal aborts only if the exec is not started by the deadline;
  // once started, the run's exec lives on after this call.
  const exec = await e.call(`exec in ${handle}`, (signal) =>
    startExec(
      e.docker,
      containerId,
      run.argv,
      run.env,
      {
        stdout: (data) => tracker.push(decoder.write(data)),
        stderr: (data) => tracker.push(data.toString('utf8')),
      },
      signal,
    ),
  );
  exec.done
    .then(() => {
      tracker.push(decoder.end());
      return readMarkerIn(e, containerId, run.sessionId);
    })
    .then(
      (exitCode) => {
        if (exitCode === null) {
          tracker.fail(new ContainerError('exec_lost', `${handle} ended without an exit marker`));
        } else tracker.exit({ exitCode });
      },
      (error: unknown) =>
        tracker.fail(
          new ContainerError('exec_lost', `${handle}'s exec ended and its container is gone`, {
            cause: error,
          }),
        ),
    );
}
