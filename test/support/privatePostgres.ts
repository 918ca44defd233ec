/**
 * A private PostgreSQL server for one test file: `initdb` into a fresh temp
 * dir, trust auth, a free port on 127.0.0.1 and the unix socket inside the
 * dir, so a test can stop and start it (an outage) without touching any
 * server someone else uses. initdb refuses to run as root, so as root every
 * server command runs as the `postgres` OS user (`runuser`), which owns the dir.
 *
 * pg_ctl daemonizes the server: it outlives this process unless stopped.
 * Callers put `destroy()` in `afterAll` (or a `finally`); an exit hook stops
 * whatever is still running when the worker exits anyway. Every command has
 * a deadline (pg_ctl's `-t` and a kill timeout on the child beside it).
 *
 * @example
 * ```ts
 * let server: PrivatePostgres;
 * beforeAll(async () => { server = await startPrivatePostgres(); });
 * afterAll(() => server?.destroy());
 * it('survives an outage', async () => {
 *   await server.stop('fast');
 *   await server.start();
 * });
 * ```
 */
import { execFile, execFileSync } from 'node:child_process';
import {
  appendFileSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { freePort } from '../cli/cliProcess.js';

/** Deadline of one server command (initdb, start, stop), in seconds. */
const COMMAND_DEADLINE_S = 60;

export interface PrivatePostgres {
  /** `postgres://postgres@127.0.0.1:<port>/postgres`. */
  readonly url: string;
  readonly port: number;
  /** The temp dir: `data/`, `sock/` and `server.log`. */
  readonly dir: string;
  /** Stops the server: `fast` disconnects clients cleanly, `immediate` is a crash. A no-op when stopped. */
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  /** Starts it again on the same port and data; resolves once it accepts connections. A no-op when running. */
  start(): Promise<void>;
  /** Stops it (immediate) and removes the dir. Idempotent. */
  destroy(): Promise<void>;
}

/**
 * The newest PostgreSQL bin dir holding both `initdb` and `pg_ctl`
 * (`/usr/lib/postgresql/<major>/bin`, Debian's layout), or undefined.
 */
export function findPostgresBin(root = '/usr/lib/postgresql'): string | undefined {
  if (!existsSync(root)) return undefined;
  const majors = readdirSync(root)
    .filter((name) => /^\d+(\.\d+)?$/.test(name))
    .sort((a, b) => Number(b) - Number(a));
  for (const major of majors) {
    const bin = join(root, major, 'bin');
    if (existsSync(join(bin, 'initdb')) && existsSync(join(bin, 'pg_ctl'))) return bin;
  }
  return undefined;
}

const running = new Set<{ bin: string; data: string }>();
let exitHookInstalled = false;

/** Last resort when a worker exits with servers up: pg_ctl's children are not ours to reap. */
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const server of running) {
      try {
        execFileSync(
          ...asServerUser(join(server.bin, 'pg_ctl'), [
            '-D',
            server.data,
            '-m',
            'immediate',
            '-w',
            '-t',
            '10',
            'stop',
          ]),
          {
            stdio: 'ignore',
            timeout: 15_000,
          },
        );
      } catch {
        // Already stopped, or beyond saving: the exit must go on.
      }
    }
  });
}

/** Starts a fresh private server. Throws (with the server log) when it cannot. */
export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const bin = findPostgresBin();
  if (bin === undefined) throw new Error('no PostgreSQL binaries under /usr/lib/postgresql');
  installExitHook();
  const dir = mkdtempSync(join(tmpdir(), 'roundtable-pg-'));
  const data = join(dir, 'data');
  const sock = join(dir, 'sock');
  const log = join(dir, 'server.log');
  mkdirSync(data, { mode: 0o700 });
  mkdirSync(sock, { mode: 0o700 });
  const owner = serverUser();
  if (owner !== undefined) for (const p of [dir, data, sock]) chownSync(p, owner.uid, owner.gid);

  const entry = { bin, data };
  let port = 0;
  let state: 'stopped' | 'running' | 'destroyed' = 'stopped';

  // pg_ctl's own deadline (-t) is a little inside the child's kill timeout.
  const pgCtl = (...args: string[]) =>
    run(
      join(bin, 'pg_ctl'),
      ['-D', data, '-w', '-t', String(COMMAND_DEADLINE_S - 5), ...args],
      log,
    );
  const start = async () => {
    if (state === 'destroyed') throw new Error('private postgres already destroyed');
    if (state === 'running') return;
    await pgCtl('-l', log, 'start');
    state = 'running';
    running.add(entry);
  };
  const stop = async (mode: 'fast' | 'immediate' = 'fast') => {
    if (state !== 'running') return;
    await pgCtl('-m', mode, 'stop');
    state = 'stopped';
    running.delete(entry);
  };
  let destroying: Promise<void> | undefined;
  const destroy = () => {
    destroying ??= (async () => {
      try {
        await stop('immediate');
      } finally {
        state = 'destroyed';
        running.delete(entry);
        rmSync(dir, { recursive: true, force: true });
      }
    })();
    return destroying;
  };

  try {
    await run(
      join(bin, 'initdb'),
      ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-sync'],
      log,
    );
    // A taken port fails `start` at once; pick again a couple of times.
    for (let attempt = 0; ; attempt++) {
      port = await freePort();
      appendFileSync(
        join(data, 'postgresql.conf'),
        [
          `port = ${port}`,
          "listen_addresses = '127.0.0.1'",
          `unix_socket_directories = '${sock}'`,
          // A throwaway cluster: durability costs time and buys nothing here.
          'fsync = off',
          'full_page_writes = off',
          'max_connections = 50',
          '',
        ].join('\n'),
      );
      try {
        await start();
        break;
      } catch (error) {
        if (attempt >= 2) throw error;
      }
    }
  } catch (error) {
    await destroy().catch(() => {});
    throw error;
  }
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    get port() {
      return port;
    },
    dir,
    stop,
    start,
    destroy,
  };
}

/** The `postgres` OS user when we are root (initdb refuses root), else undefined: run as ourselves. */
function serverUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
  return { uid, gid };
}

function asServerUser(file: string, args: string[]): [string, string[]] {
  if (process.getuid?.() !== 0) return [file, args];
  return ['runuser', ['-u', 'postgres', '--', file, ...args]];
}

/** Runs a server command with a deadline; a failure carries its output and the server log's tail. */
function run(file: string, args: string[], log: string): Promise<void> {
  const [cmd, argv] = asServerUser(file, args);
  return new Promise((resolve, reject) => {
    execFile(
      cmd,
      argv,
      { timeout: COMMAND_DEADLINE_S * 1000, killSignal: 'SIGKILL', cwd: tmpdir() },
      (error, stdout, stderr) => {
        if (error === null) return resolve();
        const tail = existsSync(log) ? readTail(log) : '';
        reject(
          new Error(`${file} ${args.join(' ')} failed: ${stderr || stdout}\n${tail}`, {
            cause: error,
          }),
        );
      },
    );
  });
}

function readTail(file: string): string {
  try {
    return execFileSync('tail', ['-n', '20', file], { encoding: 'utf8', timeout: 5000 });
  } catch {
    return '';
  }
}

/**
 * A suite that needs a private server, started before its tests and
 * destroyed after them even when one fails. Without PostgreSQL binaries it
 * is reported as skipped with the reason in its title, and with `CI=true` it
 * fails instead, the way `describeEachEngine` guards the server suites.
 */
export function describeWithPrivatePostgres(
  name: string,
  body: (getServer: () => PrivatePostgres) => void,
): void {
  if (findPostgresBin() === undefined) {
    const title = `${name} (no PostgreSQL binaries under /usr/lib/postgresql)`;
    if (process.env.CI === 'true') {
      describe(title, () => {
        it('runs in CI', () => {
          throw new Error('CI=true but initdb/pg_ctl are missing: the outage suite must run');
        });
      });
    } else {
      describe.skip(title, () =>
        body(() => {
          throw new Error('no private server');
        }),
      );
    }
    return;
  }
  describe(name, () => {
    let server: PrivatePostgres | undefined;
    beforeAll(async () => {
      server = await startPrivatePostgres();
    });
    afterAll(async () => {
      await server?.destroy();
    });
    body(() => {
      if (server === undefined) throw new Error('getServer() called outside a test of this suite');
      return server;
    });
  });
}
