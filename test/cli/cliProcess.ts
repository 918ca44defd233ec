/**
 * The built CLI as a child process, for the end-to-end test: its JSON log
 * records as they arrive, and waits on them that each have a deadline.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';

export type LogRecord = Record<string, unknown> & { msg?: string };

/**
 * The parent's environment without anything that configures roundtable: CI
 * exports DOCKER_HOST and ROUNDTABLE_RUNNER_IMAGE for the container suites,
 * and the child must run on what the test gives it, nothing else.
 */
export function cleanEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (
      v === undefined ||
      k.startsWith('ROUNDTABLE_') ||
      k === 'DATABASE_URL' ||
      k === 'DOCKER_HOST'
    ) {
      continue;
    }
    env[k] = v;
  }
  return { ...env, ...extra };
}

export class CliProcess {
  readonly records: LogRecord[] = [];
  stderr = '';
  private readonly child: ChildProcess;
  private readonly exited: Promise<number | null>;
  private waiters: Array<() => void> = [];

  constructor(script: string, args: readonly string[], env: Record<string, string> = {}) {
    this.child = spawn(process.execPath, [script, ...args], {
      env: cleanEnv({ ...env, ROUNDTABLE_LOG_FORMAT: 'json' }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let buffer = '';
    this.child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      buffer += chunk;
      let nl = buffer.indexOf('\n');
      while (nl >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        try {
          this.records.push(JSON.parse(line) as LogRecord);
        } catch {
          this.records.push({ msg: `(not JSON) ${line}` });
        }
        nl = buffer.indexOf('\n');
      }
      for (const w of this.waiters) w();
    });
    this.child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      this.stderr += chunk;
    });
    this.exited = new Promise((resolve) => this.child.on('exit', (code) => resolve(code)));
  }

  /** The first record matching `predicate`, waiting up to `ms`. */
  waitFor(predicate: (r: LogRecord) => boolean, ms: number, what: string): Promise<LogRecord> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const hit = this.records.find(predicate);
        if (hit === undefined) return false;
        done();
        resolve(hit);
        return true;
      };
      const timer = setTimeout(() => {
        done();
        reject(
          new Error(
            `no ${what} within ${ms} ms; stderr: ${this.stderr}\nlast logs: ${this.tail()}`,
          ),
        );
      }, ms);
      const waiter = () => void check();
      const done = () => {
        clearTimeout(timer);
        this.waiters = this.waiters.filter((w) => w !== waiter);
      };
      this.waiters.push(waiter);
      void this.exited.then(() => {
        if (!check()) {
          done();
          reject(
            new Error(`exited before ${what}; stderr: ${this.stderr}\nlast logs: ${this.tail()}`),
          );
        }
      });
      check();
    });
  }

  signal(signal: NodeJS.Signals): void {
    this.child.kill(signal);
  }

  /** The exit code, waiting up to `ms` (then the process is killed and this rejects). */
  async exitCode(ms: number): Promise<number | null> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        this.child.kill('SIGKILL');
        reject(new Error(`did not exit within ${ms} ms; last logs: ${this.tail()}`));
      }, ms);
    });
    try {
      return await Promise.race([this.exited, deadline]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Ends the process if it still runs (afterAll). */
  async kill(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      this.child.kill('SIGKILL');
      await this.exited;
    }
  }

  tail(n = 8): string {
    return this.records
      .slice(-n)
      .map((r) => JSON.stringify(r))
      .join('\n');
  }
}

/** Ports this process has handed out, never handed out again. */
const handedOut = new Set<number>();

/** Whether 127.0.0.1:`port` can be listened on right now. */
function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * A port nobody listens on right now, for a process the test starts later.
 * Drawn at random below the kernel's ephemeral range (32768-60999 here):
 * a port the kernel handed out for `listen(0)` and took back could go to an
 * outgoing connection (every test talks to Postgres) before the node
 * listened on it, and did (a rolling-deploy node's board: EADDRINUSE).
 * Below that range only another test's draw can take it.
 */
export async function freePort(): Promise<number> {
  for (let tries = 0; tries < 100; tries++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    if (handedOut.has(port) || !(await canListen(port))) continue;
    handedOut.add(port);
    return port;
  }
  throw new Error('no free port in 20000-31999 after 100 tries');
}
