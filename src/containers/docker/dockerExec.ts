/**
 * `docker exec` as the backends use it: start a command in a container with
 * stdout and stderr demultiplexed, and learn its exit code when it ends.
 *
 * Each exec takes the signal of the engine call it runs in. Aborting the
 * HTTP requests is not enough: node hands the upgraded (hijacked) socket
 * over and detaches it from its request, so the request's signal no longer
 * reaches it, and a hung exec would keep its socket open and its `done`
 * unsettled after the caller's deadline answered. So the abort also
 * destroys the stream here.
 */
import { type Duplex, PassThrough } from 'node:stream';
import type Docker from 'dockerode';

export interface ExecStarted {
  /**
   * Resolves with the exec's exit code (null if the engine lost it) when its
   * stream ends; rejects with the signal's reason if it is aborted first.
   */
  done: Promise<number | null>;
}

export interface ExecSinks {
  stdout: (data: Buffer) => void;
  stderr: (data: Buffer) => void;
}

/**
 * Starts `argv` in `containerId`; resolves once the engine accepted the exec.
 * `signal` bounds the whole exec until `done` settles: an abort cancels the
 * engine request in flight, closes the stream, and rejects with its reason.
 * An already-aborted signal starts nothing. Aborting does not stop the
 * command in the container; it only lets go of it.
 */
export async function startExec(
  docker: Docker,
  containerId: string,
  argv: readonly string[],
  env: Readonly<Record<string, string>>,
  sinks: ExecSinks,
  signal: AbortSignal,
): Promise<ExecStarted> {
  signal.throwIfAborted();
  let stream: Duplex;
  let exec: Docker.Exec;
  try {
    exec = await docker.getContainer(containerId).exec({
      Cmd: [...argv],
      Env: Object.entries(env).map(([k, v]) => `${k}=${v}`),
      AttachStdout: true,
      AttachStderr: true,
      AttachStdin: false,
      Tty: false,
      abortSignal: signal,
    });
    stream = await exec.start({ hijack: true, stdin: false, abortSignal: signal });
  } catch (error) {
    // node's own AbortError says less than the reason the caller gave.
    throw signal.aborted ? signal.reason : error;
  }
  if (signal.aborted) {
    // Upgraded just as the abort came: the request's signal missed the socket.
    stream.destroy();
    throw signal.reason;
  }
  const out = new PassThrough();
  const err = new PassThrough();
  out.on('data', sinks.stdout);
  err.on('data', sinks.stderr);
  docker.modem.demuxStream(stream, out, err);
  const done = new Promise<number | null>((resolve, reject) => {
    let settled = false;
    let ended = false;
    const settle = (fn: () => void) => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      fn();
    };
    const onAbort = () => {
      stream.destroy();
      settle(() => reject(signal.reason));
    };
    signal.addEventListener('abort', onAbort, { once: true });
    const finish = () => {
      if (ended || settled) return;
      ended = true;
      exec.inspect({ abortSignal: signal }).then(
        (info) => settle(() => resolve(info.Running ? null : (info.ExitCode ?? null))),
        (error: unknown) => settle(() => reject(error)),
      );
    };
    stream.on('end', finish);
    stream.on('close', finish);
    stream.on('error', (error: unknown) => {
      if (ended) return;
      ended = true;
      settle(() => reject(error));
    });
  });
  return { done };
}

/**
 * Runs a short command and collects its stdout, keeping at most `limitBytes`.
 * `signal` is the enclosing engine call's: see `startExec`.
 */
export async function collectExec(
  docker: Docker,
  containerId: string,
  argv: readonly string[],
  limitBytes: number,
  signal: AbortSignal,
): Promise<{ stdout: Buffer; stderr: string; exitCode: number | null; overflowed: boolean }> {
  const parts: Buffer[] = [];
  let stderr = '';
  let size = 0;
  let overflowed = false;
  const started = await startExec(
    docker,
    containerId,
    argv,
    {},
    {
      stdout: (data) => {
        if (size + data.length > limitBytes) {
          overflowed = true;
          data = data.subarray(0, Math.max(0, limitBytes - size));
        }
        parts.push(data);
        size += data.length;
      },
      // Kept short: it only explains a failure.
      stderr: (data) => {
        if (stderr.length < 4096) stderr += data.toString('utf8');
      },
    },
    signal,
  );
  const exitCode = await started.done;
  return { stdout: Buffer.concat(parts), stderr, exitCode, overflowed };
}
