/**
 * The wrapper's files read back from a session's container with short
 * execs: the exit marker and the tail of the output file (with its total
 * size on the first line, READ_OUTPUT_SCRIPT). Each read is one engine call
 * with its deadline; a container with no such file is `not_found`.
 */
import type Docker from 'dockerode';
import type { RunOutput } from '../ContainerBackend.js';
import { ContainerError } from '../ContainerError.js';
import { markerPath, parseMarker, READ_OUTPUT_SCRIPT, runOutputFrom } from '../wrapper.js';
import { collectExec } from './dockerExec.js';

/**
 * The engine and the backend's deadline-bound, typed-error engine call; its
 * `signal` fires when the deadline passes, and each exec takes it so the
 * exec's stream closes then too.
 */
export interface EngineCalls {
  docker: Docker;
  call<T>(what: string, work: (signal: AbortSignal) => Promise<T>): Promise<T>;
}

/** The marker's exit code, null when it is not there (yet, or any more). */
export async function readMarkerIn(
  e: EngineCalls,
  containerId: string,
  sessionId: string,
): Promise<number | null> {
  const result = await e.call(`read marker of ${sessionId}`, (signal) =>
    collectExec(e.docker, containerId, ['cat', markerPath(sessionId)], 64, signal),
  );
  return result.exitCode === 0 ? parseMarker(result.stdout.toString('utf8')) : null;
}

/** The last `limit` bytes of the output file at `path`, and how many were written in all. */
export async function readOutputIn(
  e: EngineCalls,
  containerId: string,
  handle: string,
  path: string,
  limit: number,
): Promise<RunOutput> {
  const result = await e.call(`read output of ${handle}`, (signal) =>
    collectExec(
      e.docker,
      containerId,
      ['sh', '-c', READ_OUTPUT_SCRIPT, 'rt', path, String(limit)],
      limit + 64,
      signal,
    ),
  );
  if (result.exitCode !== 0) {
    throw new ContainerError('not_found', `${handle} has no output file: ${result.stderr.trim()}`);
  }
  const newline = result.stdout.indexOf(0x0a);
  const totalBytes = Number.parseInt(
    result.stdout.subarray(0, newline).toString('utf8').trim(),
    10,
  );
  if (newline < 0 || !Number.isFinite(totalBytes)) {
    throw new ContainerError('engine', `${handle}: unreadable output size`);
  }
  return runOutputFrom(result.stdout.subarray(newline + 1), totalBytes);
}
