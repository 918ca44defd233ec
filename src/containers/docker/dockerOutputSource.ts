/**
 * A Docker or Swarm run's output file as `follow` reads it: one short exec
 * a read, `FOLLOW_READ_SCRIPT`, which prints where its bytes start and the
 * file's size, then only the bytes asked for. Measured on 7 December 2026
 * (local engine, a busy 2-core machine, load 6): 60-90 ms a read whatever
 * the file's size, 3-4 ms of the node's CPU (15 ms for a full 1 MiB
 * slice). The engine's archive API (`GET /containers/{id}/archive`) needs
 * no applet in the image, but it sends the whole file as a tar every time
 * (a 16 MiB output: 190 ms and 72 ms of the node's CPU a poll), and it
 * cannot read a tmpfs at all, which plain Docker's `/tmp` is (404 "Could
 * not find the file"). So the image needs `sh`, `tail` and `head`, and
 * `stat` or `wc` (docs/containers.md), as `readOutput` needs `wc` and
 * `tail` already.
 *
 * The container is found once, by the handle; reads go to it by id. When
 * one fails because the container is gone or stopped, the handle is looked
 * up again: no container, or another one (a reschedule: an empty `/tmp`),
 * and the file will never grow again.
 */
import type { Clock } from '../Clock.js';
import type { FollowOptions, RunRef } from '../ContainerBackend.js';
import { ContainerError, isContainerError } from '../ContainerError.js';
import {
  FOLLOW_SLICES,
  followPolled,
  type OutputSlice,
  type OutputSource,
} from '../polledFollower.js';
import { outputPath, validateSessionId } from '../wrapper.js';
import { collectExec } from './dockerExec.js';
import type { CurrentContainer } from './startWait.js';
import type { EngineCalls } from './wrapperFiles.js';

/**
 * Between two reads that found nothing new. Each read is an exec (a
 * process in the run's container and three engine round trips, 60-90 ms):
 * once a second keeps a card about a second behind its run and costs the
 * engine one exec a second per followed run, which only adopted runs (and
 * runs whose attach broke) have.
 */
export const DOCKER_FOLLOW_POLL_MS = 1000;

/**
 * The longest wait between reads of a file that stopped growing: a quiet
 * run (a build compiling, an agent waiting on a model) costs its engine an
 * exec every 5 s instead of every second, and its card shows a new line at
 * most 5 s late; the first new bytes bring the wait back to a second.
 */
export const DOCKER_FOLLOW_QUIET_POLL_MS = 5000;

/**
 * `$1` the file, `$2` the first byte (negative: that many bytes before the
 * end), `$3` the most bytes to print. Prints `<start> <size>` on a line,
 * then the bytes. Exit 3: no such file (yet).
 */
export const FOLLOW_READ_SCRIPT = [
  // stat answers from the inode; busybox's wc reads the whole file (~50 ms for 16 MiB).
  's=$(stat -c %s "$1" 2>/dev/null) || s=$(wc -c <"$1") || exit 3',
  's=$((s))',
  'from=$2',
  'if [ "$from" -lt 0 ]; then from=$((s + from)); fi',
  'if [ "$from" -lt 0 ]; then from=0; fi',
  'echo "$from $s"',
  'if [ "$from" -lt "$s" ]; then tail -c +"$((from + 1))" "$1" | head -c "$3"; fi',
].join('\n');

const NO_FILE = 3;
const HEADER_BYTES = 64;

const gone = (e: unknown) =>
  isContainerError(e) && (e.code === 'not_found' || e.code === 'conflict');

export interface DockerFollow {
  engine: EngineCalls;
  clock: Clock;
  /** The handle's running container now (null: none); throws `not_found` when the handle is gone. */
  current: () => Promise<CurrentContainer | null>;
  limitBytes: number;
}

/** `ContainerBackend.follow` for the Docker backends. Never throws. */
export function followDockerRun(ref: RunRef, options: FollowOptions, d: DockerFollow): void {
  let path: string;
  try {
    path = outputPath(validateSessionId(ref.sessionId));
  } catch {
    options.onEnd?.(); // no file can be named for such a ref: nothing to follow
    return;
  }
  const source = dockerOutputSource(d, ref.handle, path);
  followPolled(
    source,
    options,
    {
      clock: d.clock,
      pollMs: DOCKER_FOLLOW_POLL_MS,
      quietPollMs: DOCKER_FOLLOW_QUIET_POLL_MS,
      ...FOLLOW_SLICES,
    },
    d.limitBytes,
  );
}

export function dockerOutputSource(d: DockerFollow, handle: string, path: string): OutputSource {
  let container: CurrentContainer | null = null;
  /** The run's container is gone from under the handle (null: still there, or not known). */
  const lost = async (): Promise<boolean> => {
    const now = await d.current().catch((error: unknown) => {
      if (isContainerError(error) && error.code === 'not_found') return null;
      throw error;
    });
    return (
      now === null ||
      now.id !== container?.id ||
      now.startedAt?.getTime() !== container.startedAt?.getTime()
    );
  };
  return {
    async read(from, limit): Promise<OutputSlice> {
      if (container === null) {
        const now = await d.current().catch((error: unknown) => {
          if (isContainerError(error) && error.code === 'not_found') return 'gone' as const;
          throw error;
        });
        if (now === 'gone') return { kind: 'replaced' };
        if (now === null) return { kind: 'missing' };
        container = now;
      }
      const id = container.id;
      const argv = ['sh', '-c', FOLLOW_READ_SCRIPT, 'rt-follow', path, String(from), String(limit)];
      let result: Awaited<ReturnType<typeof collectExec>>;
      try {
        result = await d.engine.call(`follow ${handle}`, (signal) =>
          collectExec(d.engine.docker, id, argv, limit + HEADER_BYTES, signal),
        );
      } catch (error) {
        if (gone(error) && (await lost())) return { kind: 'replaced' };
        throw error;
      }
      if (result.exitCode === NO_FILE) return { kind: 'missing' };
      return followAnswer(result, from, handle);
    },
  };
}

/**
 * `FOLLOW_READ_SCRIPT`'s answer as a slice; anything else is an `engine`
 * error, which the follower retries a period later.
 *
 * @example
 * ```ts
 * followAnswer({ exitCode: 0, stdout: Buffer.from('2 5\ncde'), stderr: '' }, 2, 'rt-s1') // => { kind: 'bytes', start: 2, size: 5, bytes: Buffer.from('cde') }
 * followAnswer({ exitCode: 0, stdout: Buffer.from('3 9\nxyz'), stderr: '' }, -7, 'rt-s1').start // => 3
 * followAnswer({ exitCode: 0, stdout: Buffer.from('5 5\n'), stderr: '' }, 5, 'rt-s1').bytes.length // => 0
 * followAnswer({ exitCode: 0, stdout: Buffer.from('0 5\n'), stderr: 'sh: tail: not found' }, 0, 'rt-s1') // throws engine
 * followAnswer({ exitCode: 1, stdout: Buffer.alloc(0), stderr: '' }, 0, 'rt-s1') // throws engine
 * followAnswer({ exitCode: 0, stdout: Buffer.from('4 9\nx'), stderr: '' }, 2, 'rt-s1') // throws engine
 * ```
 */
export function followAnswer(
  answer: { exitCode: number | null; stdout: Buffer; stderr: string },
  from: number,
  handle: string,
): OutputSlice {
  const { exitCode, stdout, stderr } = answer;
  const newline = stdout.indexOf(0x0a);
  const [start, size] = stdout
    .subarray(0, Math.max(0, newline))
    .toString('latin1')
    .split(' ')
    .map(Number);
  const bytes = stdout.subarray(newline + 1);
  if (
    exitCode !== 0 ||
    newline < 0 ||
    start === undefined ||
    size === undefined ||
    !Number.isSafeInteger(start) ||
    !Number.isSafeInteger(size) ||
    (from >= 0 && start !== from) ||
    // Nothing printed of a file longer than the start: no `tail` or `head` in the image.
    (bytes.length === 0 && start < size)
  ) {
    throw new ContainerError(
      'engine',
      `follow ${handle}: unreadable answer (exit ${exitCode}): ${stderr.trim().slice(0, 200)}`,
    );
  }
  return { kind: 'bytes', start, size, bytes };
}
