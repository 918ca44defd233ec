/**
 * The boot lock: each boot of a node holds a session-level advisory lock,
 * keyed by its owner name, on a connection of its own for as long as it
 * lives. When the process dies the server drops the connection and with it
 * the lock, at once, so the other nodes read a death from `pg_locks`
 * (`heldBootKeys`) without waiting for a heartbeat to go stale.
 *
 * Its own `pg.Client`, never a pooled one: the pool hands connections out
 * and takes them back, and a session lock would move with them. The
 * connection is pinged on a period with the client deadline, so a socket
 * cut without a FIN is noticed here too; on any loss the lock is `lost`
 * (this boot cannot prove it is alive: it takes no grants, see
 * src/machines/livenessPolicy.ts) and is taken again with capped backoff.
 * If the server still holds the key for this boot's previous, cut session,
 * the lock is `busy`: that session is ended with `pg_terminate_backend`
 * (allowed for one's own role) and the lock taken on the next try.
 *
 * Server only: PGlite is one process, so there a node is alone and its
 * liveness is its heartbeat row.
 */
import { createHash } from 'node:crypto';
import { type RawBuilder, sql } from 'kysely';
import pg from 'pg';
import { BOOT_LOCK_NAMESPACE } from './advisoryLocks.js';
import { endWithin, type ListenTimers } from './dedicatedClient.js';
import { listenRetryDelay } from './listen.js';
import { checkEachConnection, type SessionCheck } from './sessionProbe.js';
import type { Db } from './transaction.js';

/** `held`: the lock is ours; `lost`: no connection; `busy`: the server gives the key to another session. */
export type BootLockState = 'held' | 'lost' | 'busy';

/**
 * The lock key of an owner: the first 31 bits of its SHA-256 (non-negative,
 * so it reads back from `pg_locks.objid` as the same number).
 *
 * @example
 * ```ts
 * bootLockKey('a@b1') === bootLockKey('a@b1') // => true
 * bootLockKey('a@b1') === bootLockKey('a@b2') // => false
 * bootLockKey('a@b1') >= 0 && bootLockKey('a@b1') < 2 ** 31 // => true
 * ```
 */
export function bootLockKey(owner: string): number {
  return createHash('sha256').update(owner).digest().readUInt32BE(0) & 0x7fffffff;
}

/**
 * The `pg_locks` rows of the boot locks some session of this database holds
 * now, one key `k` each: a fragment, so that the liveness watch's one
 * statement (src/db/livenessReading.ts) reads them by the same filter.
 */
export function heldBootKeysQuery(): RawBuilder<{ k: string | number }> {
  return sql<{ k: string | number }>`
    SELECT objid::int8 AS k FROM pg_locks
    WHERE locktype = 'advisory' AND granted AND objsubid = 2
      AND classid = ${BOOT_LOCK_NAMESPACE}::oid
      AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`;
}

/** The boot lock keys some session of this database holds now. */
export async function heldBootKeys(db: Db): Promise<Set<number>> {
  const r = await heldBootKeysQuery().execute(db);
  return new Set(r.rows.map((row) => Number(row.k)));
}

export interface BootLockConfig {
  /** The lock's own connection: URL, connect and query deadlines. */
  client: pg.ClientConfig;
  owner: string;
  /** Period of the ping that notices a silent cut. */
  pingMs: number;
  retryMinMs: number;
  retryMaxMs: number;
  /** Deadline for closing the connection on release. */
  closeTimeoutMs: number;
  timers: ListenTimers;
  onState(state: BootLockState): void;
  /** The error that lost the connection, or a callback that threw. */
  onError(error: Error): void;
  /** Asked of each connection before it takes the lock (src/db/sessionProbe.ts); none: not asked. */
  checkSession?: SessionCheck;
}

/** A held (or being retaken) boot lock. */
export interface BootLock {
  state(): BootLockState;
  /** Gives the lock back and closes its connection (a clean stop). Idempotent. */
  release(): Promise<void>;
  /** Destroys the connection at once, as a dying process would (`kill()`). */
  drop(): void;
}

/** Takes the boot lock; resolves after the first attempt, whatever its state. */
export async function holdBootLock(config: BootLockConfig): Promise<BootLock> {
  const { timers } = config;
  const key = bootLockKey(config.owner);
  let stopped = false;
  let client: pg.Client | undefined;
  let state: BootLockState = 'lost';
  let failures = 0;
  let retryTimer: unknown;
  let pingTimer: unknown;
  /** Backend pid of this boot's last session that held the key. */
  let heldBy: number | undefined;
  const checked = checkEachConnection(config.checkSession, config.onError);

  const report = (next: BootLockState) => {
    if (state === next) return;
    state = next;
    try {
      config.onState(next);
    } catch (error) {
      config.onError(error instanceof Error ? error : new Error(String(error)));
    }
  };
  const close = (c: pg.Client) => endWithin(c, timers, config.closeTimeoutMs);
  const retry = () => {
    const wait = listenRetryDelay(failures++, config.retryMinMs, config.retryMaxMs);
    retryTimer = timers.setTimeout(() => void attempt(), wait);
  };
  const lose = (c: pg.Client, error: unknown) => {
    if (client !== c) return;
    client = undefined;
    timers.clearTimeout(pingTimer);
    void close(c);
    if (stopped) return;
    if (state === 'held')
      config.onError(
        new Error(`the boot lock of ${config.owner} lost its connection`, { cause: error }),
      );
    report('lost');
    retry();
  };
  const ping = (c: pg.Client) => {
    pingTimer = timers.setTimeout(() => {
      c.query('SELECT 1').then(
        () => {
          if (client === c) ping(c);
        },
        (error: unknown) => lose(c, error),
      );
    }, config.pingMs);
  };

  const attempt = async () => {
    if (stopped) return;
    const c = new pg.Client({ ...config.client, application_name: 'roundtable-bootlock' });
    client = c;
    c.on('error', (error) => lose(c, error));
    c.on('end', () => lose(c, new Error('boot lock connection ended')));
    let got: { ok: boolean; pid: number } | undefined;
    try {
      await c.connect();
      // Taken on a pooled server connection, the lock would outlive this
      // node and vouch for it dead: such a connection stays lost (no grants).
      await checked(c);
      const r = await c.query<{ ok: boolean; pid: number }>(
        'SELECT pg_try_advisory_lock($1::int4, $2::int4) AS ok, pg_backend_pid() AS pid',
        [BOOT_LOCK_NAMESPACE, key],
      );
      got = r.rows[0];
      if (got?.ok !== true && heldBy !== undefined) {
        // Our previous session, cut without a FIN, still holds the key on
        // the server: end it, and take the lock on the next try.
        await c.query('SELECT pg_terminate_backend($1::int4)', [heldBy]);
      }
    } catch (error) {
      lose(c, error);
      return;
    }
    if (client !== c || stopped) return;
    if (got?.ok !== true) {
      report('busy');
      client = undefined;
      void close(c);
      retry();
      return;
    }
    heldBy = got.pid;
    failures = 0;
    report('held');
    ping(c);
  };

  await attempt();
  return {
    state: () => state,
    async release() {
      if (stopped) return;
      stopped = true;
      timers.clearTimeout(retryTimer);
      timers.clearTimeout(pingTimer);
      const c = client;
      client = undefined;
      // Ending the session frees its locks; no unlock needed.
      if (c !== undefined) await close(c);
    },
    drop() {
      if (stopped) return;
      stopped = true;
      timers.clearTimeout(retryTimer);
      timers.clearTimeout(pingTimer);
      const c = client;
      client = undefined;
      // The socket goes now, as a killed process's would (the server sees EOF).
      (
        c as unknown as { connection?: { stream?: { destroy(): void } } } | undefined
      )?.connection?.stream?.destroy();
    },
  };
}
