/**
 * A private PgBouncer in transaction mode in front of the test server, for
 * the suites that run the store and whole nodes behind a transaction pooler
 * (the shape docs/operations.md tells operators to start with `--pooler
 * transaction`). Its settings are the stock ones but `pool_mode =
 * transaction`, trust auth and where it listens: no `ignore_startup_parameters`
 * unless a suite asks (`settings`), so a client that sends session settings at
 * startup is refused, as a stock PgBouncer refuses it.
 *
 * A fresh temp dir holds its config, auth file and log; it listens on a free
 * port on 127.0.0.1 (no unix socket) and runs in the foreground as a child of
 * this process, so `destroy()` (or the exit hook) ends it. PgBouncer refuses
 * to run as root: as root it switches to the `postgres` OS user (`-u`), which
 * then owns the dir.
 *
 * @example
 * ```ts
 * describeWithPgbouncer('behind a pooler', (getPooler) => {
 *   it('connects', async () => {
 *     const url = getPooler().urlFor('some_db');
 *   });
 * });
 * ```
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { type ConnectOptions, connect, type DbHandle } from '../../src/db/connect.js';
import { freePort } from '../cli/cliProcess.js';
import { admin, TEST_DATABASE_URL_VAR } from './databases.js';

/** How long PgBouncer may take to accept a connection after it starts. */
const READY_MS = 15_000;
const STOP_MS = 5_000;

export interface PrivatePgbouncer {
  /** A URL to `database` on the test server, through the pooler. */
  urlFor(database: string): string;
  readonly port: number;
  readonly dir: string;
  /** Its log so far: what it warned about. */
  log(): string;
  /** Ends it (SIGTERM, then SIGKILL) and removes the dir. Idempotent. */
  destroy(): Promise<void>;
}

/** The pgbouncer binary: `ROUNDTABLE_PGBOUNCER`, else Debian's place, else undefined. */
export function findPgbouncer(): string | undefined {
  const candidates = [
    process.env.ROUNDTABLE_PGBOUNCER,
    '/usr/sbin/pgbouncer',
    '/usr/bin/pgbouncer',
  ];
  return candidates.find((c): c is string => c !== undefined && c !== '' && existsSync(c));
}

const alive = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of alive) child.kill('SIGKILL');
});

export interface PgbouncerSettings {
  /** Default `transaction`; `session` pins a server connection to each client. */
  poolMode?: 'transaction' | 'session';
  /**
   * Startup parameters it accepts and drops (`ignore_startup_parameters`):
   * a pooler configured to let a session-minded client in, whose settings
   * and session semantics are then silently gone.
   */
  ignoreStartupParameters?: readonly string[];
}

/**
 * A pooler told to accept and drop the settings a node sends at startup
 * (src/db/connect.ts): the node gets in as if it were a session, and is not.
 */
export const PERMISSIVE_POOLER: PgbouncerSettings = {
  ignoreStartupParameters: [
    'statement_timeout',
    'lock_timeout',
    'idle_in_transaction_session_timeout',
  ],
};

/** The same in session mode: each client a server session of its own, its settings dropped all the same. */
export const PERMISSIVE_SESSION_POOLER: PgbouncerSettings = {
  ...PERMISSIVE_POOLER,
  poolMode: 'session',
};

/** Starts a pooler in front of `server` (a Postgres URL: its host, port and user are used). */
export async function startPrivatePgbouncer(
  server: string,
  settings: PgbouncerSettings = {},
): Promise<PrivatePgbouncer> {
  const bin = findPgbouncer();
  if (bin === undefined) throw new Error('pgbouncer is not installed');
  const target = new URL(server);
  const user = decodeURIComponent(target.username || 'postgres');
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'roundtable-pgbouncer-'));
  const logfile = join(dir, 'pgbouncer.log');
  writeFileSync(join(dir, 'users.txt'), `"${user}" ""\n`);
  writeFileSync(
    join(dir, 'pgbouncer.ini'),
    [
      '[databases]',
      `* = host=${target.hostname} port=${target.port || '5432'}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${join(dir, 'users.txt')}`,
      `pool_mode = ${settings.poolMode ?? 'transaction'}`,
      ...(settings.ignoreStartupParameters
        ? [`ignore_startup_parameters = ${settings.ignoreStartupParameters.join(',')}`]
        : []),
      'max_client_conn = 500',
      'default_pool_size = 20',
      'log_connections = 0',
      'log_disconnections = 0',
      `logfile = ${logfile}`,
      '',
    ].join('\n'),
  );
  const root = process.getuid?.() === 0;
  if (root) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    for (const f of ['', 'users.txt', 'pgbouncer.ini']) chownSync(join(dir, f), uid, gid);
  }
  const child = spawn(bin, [...(root ? ['-u', 'postgres'] : []), join(dir, 'pgbouncer.ini')], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  alive.add(child);
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (c: string) => {
    stderr += c;
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const urlFor = (database: string): string => {
    const u = new URL(server);
    u.host = `127.0.0.1:${port}`;
    u.pathname = `/${database}`;
    return u.toString();
  };
  let destroyed: Promise<void> | undefined;
  const pooler: PrivatePgbouncer = {
    urlFor,
    port,
    dir,
    log: () => (existsSync(logfile) ? readFileSync(logfile, 'utf8') : ''),
    destroy() {
      destroyed ??= (async () => {
        if (child.exitCode === null && child.signalCode === null) {
          child.kill('SIGTERM');
          const late = setTimeout(() => child.kill('SIGKILL'), STOP_MS);
          await exited;
          clearTimeout(late);
        }
        alive.delete(child);
        rmSync(dir, { recursive: true, force: true });
      })();
      return destroyed;
    },
  };
  const deadline = Date.now() + READY_MS;
  for (;;) {
    if (child.exitCode !== null) {
      await pooler.destroy();
      throw new Error(`pgbouncer exited at start (${child.exitCode}): ${stderr}`);
    }
    const c = new pg.Client({
      connectionString: urlFor('postgres'),
      connectionTimeoutMillis: 1_000,
    });
    try {
      await c.connect();
      await c.query('SELECT 1');
      await c.end();
      return pooler;
    } catch (error) {
      await c.end().catch(() => undefined);
      if (Date.now() > deadline) {
        await pooler.destroy();
        throw new Error(
          `pgbouncer did not answer within ${READY_MS} ms: ${String(error)} ${stderr}`,
        );
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

/**
 * A suite that needs the test server and a private pooler before it, started
 * before its tests and ended after them even when one fails. Without either
 * it is reported as skipped with the reason in its title; with `CI=true` it
 * fails instead (CI installs pgbouncer: scripts/ci/15-pgbouncer.sh).
 */
export function describeWithPgbouncer(
  name: string,
  body: (getPooler: () => PrivatePgbouncer, server: string) => void,
  settings: PgbouncerSettings = {},
): void {
  const server = process.env[TEST_DATABASE_URL_VAR];
  const missing =
    server === undefined
      ? `${TEST_DATABASE_URL_VAR} is not set`
      : findPgbouncer() === undefined
        ? 'pgbouncer is not installed'
        : null;
  if (missing !== null || server === undefined) {
    const title = `${name} (skipped: ${missing})`;
    if (process.env.CI === 'true') {
      describe(title, () => {
        it('runs in CI', () => {
          throw new Error(`CI=true but ${missing}: the pooler suite must run`);
        });
      });
    } else {
      describe.skip(title, () =>
        body(() => {
          throw new Error('no pooler');
        }, ''),
      );
    }
    return;
  }
  describe(name, () => {
    let pooler: PrivatePgbouncer | undefined;
    beforeAll(async () => {
      pooler = await startPrivatePgbouncer(server, settings);
    }, READY_MS + 5_000);
    afterAll(async () => {
      await pooler?.destroy();
    });
    body(() => {
      if (pooler === undefined) throw new Error('getPooler() called outside a test of this suite');
      return pooler;
    }, server);
  });
}

/**
 * A database of the suite's own on `server`, reached through the suite's
 * pooler: created before its tests and dropped after them, every handle
 * `open` gave closed first. Call it inside a `describeWithPgbouncer` body.
 */
export function pooledDatabase(
  getPooler: () => PrivatePgbouncer,
  server: string,
  prefix: string,
): { readonly name: string; open(options?: ConnectOptions): Promise<DbHandle> } {
  const name = `${prefix}_${process.pid}_${randomBytes(4).toString('hex')}`;
  const handles: DbHandle[] = [];
  beforeAll(async () => {
    await admin(server, `CREATE DATABASE ${name}`);
  });
  afterAll(async () => {
    for (const h of handles.splice(0)) await h.close();
    await admin(server, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  });
  return {
    name,
    async open(options = {}) {
      const h = await connect({
        databaseUrl: getPooler().urlFor(name),
        connectTimeoutMs: 2_000,
        ...options,
      });
      handles.push(h);
      return h;
    },
  };
}
