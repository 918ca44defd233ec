/**
 * `docker exec` as the backends use it: start a command in a container with
 * stdout and stderr demultiplexed, and learn its exit code when it ends.
 */
import { PassThrough } from 'node:stream';
import type Docker from 'dockerode';

export interface ExecStarted {
  /** Resolves with the exec's exit code (null if the engine lost it) when its stream ends. */
  done: Promise<number | null>;
}

export interface ExecSinks {
  stdout: (data: Buffer) => void;
  stderr: (data: Buffer) => void;
}

/** Starts `argv` in `containerId`; resolves once the engine accepted the exec. */
export async function startExec(
  docker: Docker,
  containerId: string,
  argv: readonly string[],
  env: Readonly<Record<string, string>>,
  sinks: ExecSinks,
): Promise<ExecStarted> {
  const exec = await docker.getContainer(containerId).exec({
    Cmd: [...argv],
    Env: Object.entries(env).map(([k, v]) => `${k}=${v}`),
    AttachStdout: true,
    AttachStderr: true,
    AttachStdin: false,
    Tty: false,
  });
  const stream = await exec.start({ hijack: true, stdin: false });
  const out = new PassThrough();
  const err = new PassThrough();
  out.on('data', sinks.stdout);
  err.on('data', sinks.stderr);
  docker.modem.demuxStream(stream, out, err);
  const done = new Promise<number | null>((resolve, reject) => {
    let ended = false;
    const finish = () => {
      if (ended) return;
      ended = true;
      exec.inspect().then((info) => {
        resolve(info.Running ? null : (info.ExitCode ?? null));
      }, reject);
    };
    stream.on('end', finish);
    stream.on('close', finish);
    stream.on('error', (error: unknown) => {
      if (ended) return;
      ended = true;
      reject(error);
    });
  });
  return { done };
}

/** Runs a short command and collects its stdout, keeping at most `limitBytes`. */
export async function collectExec(
  docker: Docker,
  containerId: string,
  argv: readonly string[],
  limitBytes: number,
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
  );
  const exitCode = await started.done;
  return { stdout: Buffer.concat(parts), stderr, exitCode, overflowed };
}
