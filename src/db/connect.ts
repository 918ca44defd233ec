/**
 * Opens the store. One code path for both engines: kysely's stock
 * `PostgresDialect` over a `pg.Pool`, pointed either at a Postgres server or,
 * through `createPgConfig`, at an embedded PGlite. The embedded default lives
 * on disk (`./.roundtable/pgdata`): a queue that forgets itself on restart
 * would break rule 1. `memory://` only when a caller asks (tests).
 *
 * Every server query has deadlines (rule 2): `statement_timeout`,
 * `lock_timeout` and `idle_in_transaction_session_timeout` are sent in each
 * connection's startup packet, so they hold from its first statement, and
 * node-postgres' `query_timeout` gives up on a server that does not answer
 * at all. On PGlite none of them apply; see `PGLITE_DEADLINES`. Behind a
 * transaction pooler (`pooler: 'transaction'`) only the client deadline is
 * ours: the pooler refuses startup settings, and nothing session-scoped
 * (LISTEN, session locks) is asked of the server.
 */
import { mkdirSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import { createPgConfig } from '@electric-sql/pglite/node-postgres';
import { type Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { type BootLock, type BootLockState, holdBootLock } from './bootLock.js';
import { type ConnectOptions, type Pooler, validateConnectOptions } from './connectOptions.js';
import { deadlinePool } from './deadlinePool.js';
import { REAL_TIMERS } from './dedicatedClient.js';
import {
  ConnectError,
  NoSessionError,
  POOLED_SESSION_ADVICE,
  PooledSessionError,
  refusedByPooler,
} from './errors.js';
import { holdLeaderLock, type LeaderLock, type LeaderState } from './leaderLock.js';
import {
  type ListenState,
  listenOnPglite,
  listenOnServer,
  type ServerListenConfig,
  type Unlisten,
} from './listen.js';
import type { Database } from './schema.js';
import { probeConnection, probeSession, SESSION_PROBE, type SessionCheck } from './sessionProbe.js';
import { notInForce, type StartupSetting, sentSettings } from './startupSettings.js';
import { StoreKysely } from './storeKysely.js';

export { CONNECT_DEFAULTS, type ConnectOptions } from './connectOptions.js';

export type Engine = 'postgres' | 'pglite';

/** How often the boot lock's connection is pinged, and the ping's deadline. */
const BOOT_LOCK_PING_MS = 1_000;
const BOOT_LOCK_DEADLINE_MS = 2_000;
/** One wait for the leader lock (then asked again, after a look at whether the leader is dead). */
const LEADER_WAIT_MS = 2_000;

type StartListener = (
  channel: string,
  onPayload: (payload: string) => void,
  onState?: (state: ListenState) => void,
) => Promise<Unlisten>;

/** An open store. */
export interface DbHandle {
  /** The store's kysely; its `destroy()` is `close()` (src/db/storeKysely.ts). */
  db: Kysely<Database>;
  engine: Engine;
  /**
   * Calls `onPayload` with each NOTIFY on `channel` (a lower-case identifier,
   * else `ValidationError`). On the server the listener has its own
   * connection and reconnects by itself with capped backoff; `onState` says
   * `lost` when it cannot hear (poll meanwhile: those notifications are gone)
   * and `listening` when it can again. Behind a transaction pooler it
   * rejects with `NoSessionError`. Resolves after the first attempt,
   * with a function that stops listening and closes the connection.
   *
   * @example
   * ```ts
   * const stop = await handle.listen('session_queued', () => wake(), (s) => setPolling(s === 'lost'));
   * await stop();
   * ```
   */
  listen(
    channel: string,
    onPayload: (payload: string) => void,
    onState?: (state: ListenState) => void,
  ): Promise<() => Promise<void>>;
  /**
   * Takes this boot's lock (src/db/bootLock.ts) on a connection of its own
   * and keeps it; `onState` hears `lost`/`busy`/`held` as it changes.
   * Null on PGlite: one process, so a node is alone and its heartbeat row is
   * its liveness. Null behind a transaction pooler: heartbeat rows only.
   */
  holdBootLock:
    | ((owner: string, onState: (state: BootLockState) => void) => Promise<BootLock>)
    | null;
  /**
   * Takes, or waits for, the Reconciler's leader lock (src/db/leaderLock.ts)
   * on a connection of its own; `onState` hears `leader`/`follower`/`lost`,
   * `onWaited` runs after each wait that timed out. Null on PGlite and
   * behind a transaction pooler.
   */
  holdLeaderLock:
    | ((
        name: string,
        onState: (state: LeaderState) => void,
        onWaited?: () => void,
      ) => Promise<LeaderLock>)
    | null;
  /**
   * Checks that this handle's dedicated connections (the listener's, the
   * locks') are sessions of their own: a notification sent on the pool
   * reaches a LISTEN on one within 5 s (src/db/sessionProbe.ts). Rejects
   * with `PooledSessionError` when it does not (a transaction pooler that
   * accepts the startup settings), with `ConnectError` when the server
   * cannot be asked. createRuntime runs it before it listens or takes a
   * lock. Null on PGlite and with `pooler: 'transaction'` (nothing
   * session-scoped is asked there).
   */
  probeSession: (() => Promise<void>) | null;
  /**
   * The server-side deadlines this handle sent at connect that the server
   * does not hold (src/db/startupSettings.ts): a pooler accepted and dropped
   * them, so the role's settings apply. Empty on a direct connection, on
   * PGlite and with `pooler: 'transaction'` (nothing is sent there).
   */
  settingsNotInForce: readonly StartupSetting[];
  /**
   * What stands between this handle and its server (`ConnectOptions.pooler`):
   * `transaction` tells createRuntime that no session lock can be held here.
   * `none` on PGlite.
   */
  pooler: Pooler;
  /** Stops every listener, closes the pool, and PGlite if this handle opened it. Idempotent. */
  close(): Promise<void>;
}

/**
 * Why the deadlines do not apply on PGlite. Checked on PGlite 0.5: it accepts
 * `SET statement_timeout` but never fires it (the WASM backend has no timer
 * signals), and a query runs on the event loop's thread, so a client deadline
 * could only fire after the query had finished anyway. Abandoning its one
 * backend mid-transaction would also leave the next caller inside that
 * transaction. With a single backend there is no other session to wait for a
 * lock on, and no pool for an idle transaction to starve but its own.
 */
export const PGLITE_DEADLINES =
  'none: no timer signals in WASM, one backend, queries block the loop';

/**
 * Opens the store and checks it answers. Throws `ValidationError` for an
 * unknown option (with a suggestion) or a bad deadline, and `ConnectError`,
 * with the driver's error as `cause`, when the engine cannot be reached or
 * opened. Does not migrate: call `migrate(handle.db)`.
 */
export async function connect(options: ConnectOptions = {}): Promise<DbHandle> {
  const o = validateConnectOptions(options);
  const onPoolError = o.onPoolError ?? ((error: Error) => process.emitWarning(error));

  let pool: pg.Pool;
  let owned: PGlite | undefined;
  let startListener: StartListener;
  let engine: Engine;
  let bootLock: DbHandle['holdBootLock'] = null;
  let leaderLock: DbHandle['holdLeaderLock'] = null;
  let sessionProbe: DbHandle['probeSession'] = null;
  let embedded: PGlite | undefined;
  if (o.databaseUrl !== undefined) {
    engine = 'postgres';
    // Each transaction may get another server connection: a setting sent at
    // startup would be refused (PgBouncer: "unsupported startup parameter")
    // and could hold for no session of ours anyway. The role's settings
    // apply there (docs/operations.md); the client deadline stays.
    const pooled = o.pooler === 'transaction';
    const serverConfig: pg.ClientConfig = {
      connectionString: o.databaseUrl,
      connectionTimeoutMillis: o.connectTimeoutMs,
      // 0 sends nothing, which leaves the server's own setting in force.
      ...(pooled ? {} : sentSettings(o)),
      query_timeout: o.queryTimeoutMs === 0 ? undefined : o.queryTimeoutMs,
      // So a dead peer under an idle connection is noticed by the OS too.
      keepAlive: true,
      fallback_application_name: 'roundtable',
    };
    pool = new pg.Pool({ ...serverConfig, max: o.poolMax });
    // From another connection: a session hears its own NOTIFY even behind a pooler.
    const notifyOnPool = async (channel: string, payload: string) => {
      await pool.query('SELECT pg_notify($1, $2)', [channel, payload]);
    };
    const probe = { notify: notifyOnPool, ...SESSION_PROBE, timers: o.timers ?? REAL_TIMERS };
    // Each connection the listener and the locks open, a cut one's
    // replacement too: the address may lead to a pooler by then.
    const checkSession: SessionCheck | undefined = pooled
      ? undefined
      : (c) => probeConnection(c, probe);
    const listenConfig: ServerListenConfig = {
      client: { ...serverConfig, fallback_application_name: 'roundtable-listen' },
      retryMinMs: o.listenRetryMinMs,
      retryMaxMs: o.listenRetryMaxMs,
      heartbeatMs: o.listenHeartbeatMs,
      closeTimeoutMs: o.connectTimeoutMs,
      timers: o.timers ?? REAL_TIMERS,
      onError: onPoolError,
      ...(checkSession ? { checkSession } : {}),
    };
    startListener = pooled
      ? () =>
          Promise.reject(
            new NoSessionError(
              'LISTEN needs a session of its own: behind a transaction pooler it would stay on whichever server connection ran it (poll instead)',
            ),
          )
      : (channel, onPayload, onState) => listenOnServer(listenConfig, channel, onPayload, onState);
    bootLock = (owner, onState) =>
      holdBootLock({
        // A ping or a lock answers at once: a short deadline notices a cut socket soon.
        client: { ...serverConfig, query_timeout: BOOT_LOCK_DEADLINE_MS },
        owner,
        pingMs: BOOT_LOCK_PING_MS,
        retryMinMs: o.listenRetryMinMs,
        retryMaxMs: Math.min(o.listenRetryMaxMs, 1_000),
        closeTimeoutMs: o.connectTimeoutMs,
        timers: o.timers ?? REAL_TIMERS,
        onState,
        onError: onPoolError,
        ...(checkSession ? { checkSession } : {}),
      });
    leaderLock = (name, onState, onWaited) =>
      holdLeaderLock({
        client: serverConfig,
        name,
        waitMs: LEADER_WAIT_MS,
        pingMs: BOOT_LOCK_PING_MS,
        retryMinMs: o.listenRetryMinMs,
        retryMaxMs: Math.min(o.listenRetryMaxMs, 1_000),
        closeTimeoutMs: o.connectTimeoutMs,
        timers: o.timers ?? REAL_TIMERS,
        onState,
        ...(onWaited ? { onWaited } : {}),
        onError: onPoolError,
        ...(checkSession ? { checkSession } : {}),
      });
    // A session lock behind a transaction pooler stays on the server
    // connection that took it, lent to other clients, after this node is
    // gone: no lock liveness and no leader lock there (heartbeat rows, and
    // every node's Reconciler with its compare-and-sets).
    sessionProbe = async () => {
      try {
        await probeSession({
          client: { ...serverConfig, fallback_application_name: 'roundtable-probe' },
          ...probe,
          closeTimeoutMs: o.connectTimeoutMs,
        });
      } catch (error) {
        if (error instanceof PooledSessionError) throw error;
        throw new ConnectError('cannot reach the postgres store', { cause: error });
      }
    };
    if (pooled) {
      bootLock = null;
      leaderLock = null;
      sessionProbe = null;
    }
  } else {
    engine = 'pglite';
    let instance = o.pglite;
    if (instance === undefined) {
      try {
        if (!o.dataDir.startsWith('memory://')) mkdirSync(o.dataDir, { recursive: true });
        instance = await PGlite.create(o.dataDir);
      } catch (error) {
        throw new ConnectError(`cannot open PGlite at ${o.dataDir}`, { cause: error });
      }
      owned = instance;
    }
    // One backend, nothing to reconnect to: keep the single client rather
    // than ending it after the default 10 s idle and rebuilding it.
    pool = new pg.Pool({ ...createPgConfig(instance), idleTimeoutMillis: 0 });
    const opened = instance;
    embedded = opened;
    startListener = (channel, onPayload, onState) =>
      listenOnPglite(opened, channel, onPayload, onState, onPoolError);
  }
  // pg-pool drops an idle client that errors (a server restart) and opens a
  // new one on the next checkout; without a listener the error would crash.
  pool.on('error', onPoolError);

  const listeners = new Set<Unlisten>();
  let closing: Promise<void> | undefined;
  let ending: Promise<void> | undefined;
  const endPool = () => {
    ending ??= pool.end();
    return ending;
  };
  // Kysely's own `destroy()` is never called, not even by `db.destroy()`
  // (src/db/storeKysely.ts): a query after it would fail with its untyped
  // "driver has already been destroyed". The pool is ended instead, and the
  // wrapper answers every later query `StoreClosedError`.
  const db = new StoreKysely(
    {
      dialect: new PostgresDialect({
        pool: deadlinePool(pool, {
          engine,
          isClosed: () =>
            closing !== undefined || ending !== undefined || embedded?.closed === true,
          end: endPool,
        }),
      }),
    },
    () => close(),
  );
  const close = () => {
    closing ??= (async () => {
      await Promise.all([...listeners].map((stop) => stop()));
      await endPool();
      if (owned !== undefined && !owned.closed) await owned.close();
    })();
    return closing;
  };

  const listen: DbHandle['listen'] = async (channel, onPayload, onState) => {
    if (closing !== undefined) throw new ConnectError(`the ${engine} store is closed`);
    const stop = await startListener(channel, onPayload, onState);
    if (closing !== undefined) {
      // close() ran during the first attempt and could not see this one.
      await stop();
      throw new ConnectError(`the ${engine} store is closed`);
    }
    const unlisten = async () => {
      listeners.delete(unlisten);
      await stop();
    };
    listeners.add(unlisten);
    return unlisten;
  };

  // The first round trip also reads back what the server holds of the
  // deadlines sent (src/db/startupSettings.ts): a pooler may have dropped them.
  const sent = engine === 'postgres' && o.pooler !== 'transaction' ? sentSettings(o) : {};
  let dropped: StartupSetting[] = [];
  try {
    if (Object.keys(sent).length === 0) await pool.query('SELECT 1');
    else {
      const shown = await pool.query<{ name: string; setting: string }>(
        'SELECT name, setting FROM pg_settings WHERE name = ANY($1::text[])',
        [Object.keys(sent)],
      );
      dropped = notInForce(sent, shown.rows);
    }
  } catch (error) {
    await close();
    // Said to a library user here, as the CLI says --pooler transaction.
    const advice =
      o.pooler !== 'transaction' && refusedByPooler(error)
        ? `${(error as Error).message}: ${POOLED_SESSION_ADVICE}`
        : undefined;
    throw new ConnectError(`cannot reach the ${engine} store`, {
      cause: error,
      ...(advice ? { advice } : {}),
    });
  }
  return {
    db,
    engine,
    listen,
    holdBootLock: bootLock,
    holdLeaderLock: leaderLock,
    probeSession: sessionProbe,
    settingsNotInForce: dropped,
    pooler: o.pooler,
    close,
  };
}
