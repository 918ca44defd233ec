/**
 * Starts one local run: the wrapper as a detached process (its own session
 * and process group, stdio to /dev/null, so it outlives the node as a
 * container outlives a deploy), its output followed from the run
 * directory, its handle (pid, kernel start time, boot, directory) recorded
 * there, and its exit (the marker, or `exec_lost` without one) told to the
 * run's tracker. The caller has created the run directory.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import type { Clock } from '../Clock.js';
import type { RunSpec } from '../ContainerBackend.js';
import { ContainerError } from '../ContainerError.js';
import { RunTracker } from '../RunTracker.js';
import { handleFor, outputPath, wrapperArgv, wrapperEnv } from '../wrapper.js';
import { formatLocalHandle } from './localHandle.js';
import { readLocalMarker } from './observeLocalRun.js';
import { OutputFollower } from './outputFollower.js';
import type { ProcessTable } from './processTable.js';
import type { RunDirectory } from './runDirectory.js';

/** A run this backend started and still follows. */
export interface LocalRun {
  child: ChildProcess;
  tracker: RunTracker;
  follower: OutputFollower;
}

export interface LocalSpawner {
  files: RunDirectory;
  processes: ProcessTable;
  clock: Clock;
  baseEnv: Readonly<Record<string, string>>;
  outputPollMs: number;
}

export function spawnLocalRun(
  sessionId: string,
  spec: RunSpec,
  o: LocalSpawner,
): { run: LocalRun; handle: string; startedAt: Date } {
  // The wrapper's `sh` by its absolute path: looked up on the run's PATH,
  // which the task may set, it could make the run impossible to start.
  const [, ...args] = wrapperArgv(spec.command);
  const name = handleFor(sessionId);
  const dir = o.files.dirOf(sessionId);
  const tracker = new RunTracker(name);
  const follower = new OutputFollower(
    outputPath(sessionId, dir),
    (chunk) => tracker.push(chunk),
    o.clock,
    o.outputPollMs,
  );
  follower.start(dir);
  let child: ChildProcess;
  try {
    // detached: setsid(), so the run is its own session and process group and
    // no terminal signal (Ctrl-C on the node) reaches it; stdio to /dev/null.
    child = spawn('/bin/sh', args, {
      cwd: o.files.workDirOf(sessionId),
      env: runEnv(o.baseEnv, wrapperEnv(sessionId, spec.env, dir)),
      stdio: 'ignore',
      detached: true,
    });
  } catch (error) {
    follower.close();
    o.files.remove(sessionId);
    throw new ContainerError('engine', `could not run ${name}`, { cause: error });
  }
  const pid = child.pid;
  if (pid === undefined) {
    // A spawn that fails (no such directory, no process left to fork) says
    // why in an 'error' event on a later turn: unheard, it would end the node.
    child.on('error', () => undefined);
    follower.close();
    o.files.remove(sessionId);
    throw new ContainerError('engine', `could not run ${name}: no process was created`);
  }
  // Read now, synchronously: the process cannot have been reaped yet, so its
  // entry is there even if the command already ended.
  const identity = o.processes.identityOf(pid);
  const handle = formatLocalHandle({
    sessionId,
    pid,
    startToken: identity?.startToken ?? '0',
    bootToken: o.processes.bootToken,
    dir: o.files.root,
  });
  const startedAt = new Date(o.clock.now());
  o.files.writeRecord(sessionId, { handle, startedAt });
  child.unref();
  child.on('error', (error) =>
    tracker.fail(
      new ContainerError('exec_lost', `${name} could not be waited on`, { cause: error }),
    ),
  );
  child.on('exit', (_code, signal) => {
    follower.finish();
    const exitCode = readLocalMarker(o.files, sessionId);
    if (exitCode !== null) tracker.exit({ exitCode });
    else
      tracker.fail(
        new ContainerError(
          'exec_lost',
          `${name} ended without an exit marker${signal ? ` (${signal})` : ''}`,
        ),
      );
  });
  return { run: { child, tracker, follower }, handle, startedAt };
}

/**
 * The run's environment: the host's base, then the task's and the
 * wrapper's. A task's PATH comes first, with the host's after it, so that
 * the wrapper's own tools (`tee`, `cat`, `mv`) are found whatever the task
 * sets and its exit marker is always written.
 *
 * @example
 * ```ts
 * runEnv({ PATH: '/usr/bin:/bin', HOME: '/root' }, { PATH: '/opt/x', A: '1' }) // => { PATH: '/opt/x:/usr/bin:/bin', HOME: '/root', A: '1' }
 * runEnv({ PATH: '/usr/bin' }, { A: '1' }) // => { PATH: '/usr/bin', A: '1' }
 * runEnv({}, { PATH: '/opt/x' }) // => { PATH: '/opt/x' }
 * ```
 */
export function runEnv(
  base: Readonly<Record<string, string>>,
  run: Readonly<Record<string, string>>,
): Record<string, string> {
  const env = { ...base, ...run };
  if (run.PATH !== undefined && base.PATH !== undefined && base.PATH !== '')
    env.PATH = run.PATH === '' ? base.PATH : `${run.PATH}:${base.PATH}`;
  return env;
}
