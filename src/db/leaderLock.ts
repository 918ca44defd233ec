/**
 * The Reconciler's leader lock: of the nodes sharing one database, the one
 * holding this session-level advisory lock (the Reconciler's key, so a node
 * of an older version taking it pass by pass is excluded too) leads, on a
 * connection of its own, for as long as it lives. Every other node waits
 * for it on a connection of its own with a lock request the server grants
 * the moment the leader's session ends: when a leader's process dies, the
 * server drops its connection and its locks, and a follower leads within a
 * round trip, with no poll period in between.
 *
 * Every wait has a deadline (`waitMs`, the session's `lock_timeout`): a wait
 * that times out is asked again at once, after `onWaited` (where the caller
 * may depose a leader it judges dead; see `leaderBackend`). A wait that
 * times out is also the follower connection's ping. While leading, the
 * connection is pinged every `pingMs` with a short deadline, so a cut socket
 * is noticed; on any loss the state is `lost` (this node leads no more:
 * another may lead already) and the lock is asked for again with capped
 * backoff. Each leadership has its own AbortSignal, aborted when it ends,
 * so a pass started under it stops at its next step.
 *
 * Server only: PGlite is one process, so there the node is alone.
 */
import { sql } from 'kysely';
import pg from 'pg';
import { errorCode } from '../common/errorCode.js';
import { ADVISORY_LOCKS, LOCK_NAMESPACE } from './advisoryLocks.js';
import { endWithin, type ListenTimers } from './dedicatedClient.js';
import { listenRetryDelay } from './listen.js';
import { checkEachConnection, type SessionCheck } from './sessionProbe.js';
import type { Db } from './transaction.js';

/** `leader`: the lock is ours; `follower`: another session holds it, we wait; `lost`: no connection. */
export type LeaderState = 'leader' | 'follower' | 'lost';

/** A leadership ended (its connection was lost, or the lock given back). */
export class LeadershipLostError extends Error {
  override readonly name = 'LeadershipLostError';
  readonly code = 'LEADERSHIP_LOST';
}

export interface LeaderLockConfig {
  /** The lock's own connection: URL and connect deadline (its query deadlines are set here). */
  client: pg.ClientConfig;
  /** Names the holder in `pg_stat_activity` (`application_name`, at most 63 bytes). */
  name: string;
  /** Deadline of one wait for the lock (then asked again). */
  waitMs: number;
  /** Period of the leader's ping, and the deadline of each ping. */
  pingMs: number;
  retryMinMs: number;
  retryMaxMs: number;
  closeTimeoutMs: number;
  timers: ListenTimers;
  onState(state: LeaderState): void;
  /** After each wait that timed out (a follower's chance to depose a dead leader). */
  onWaited?(): void;
  onError(error: Error): void;
  /** Asked of each connection before it takes or waits for the lock (src/db/sessionProbe.ts); none: not asked. */
  checkSession?: SessionCheck;
}

/** A held, awaited or being retaken leader lock. */
export interface LeaderLock {
  state(): LeaderState;
  /** The current leadership's signal (aborted when it ends); null when not leading. */
  leadership(): AbortSignal | null;
  /** Gives the lock back and closes its connection (a clean stop). Idempotent. */
  release(): Promise<void>;
  /** Destroys the connection at once, as a dying process would. */
  drop(): void;
}

const LOCK_SQL = `SELECT pg_advisory_lock(${LOCK_NAMESPACE}, ${ADVISORY_LOCKS.reconciler})`;
const TRY_SQL = `SELECT pg_try_advisory_lock(${LOCK_NAMESPACE}, ${ADVISORY_LOCKS.reconciler}) AS ok`;
/** SQLSTATE of a lock wait that ran past `lock_timeout`. */
const LOCK_NOT_AVAILABLE = '55P03';

/**
 * The session leading now: its backend pid and `application_name`, or null
 * when no session holds the leader lock.
 */
export async function leaderBackend(db: Db): Promise<{ pid: number; name: string } | null> {
  const r = await sql<{ pid: number; name: string | null }>`
    SELECT l.pid, a.application_name AS name FROM pg_locks l
    LEFT JOIN pg_stat_activity a ON a.pid = l.pid
    WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
      AND l.classid = ${LOCK_NAMESPACE}::oid AND l.objid = ${ADVISORY_LOCKS.reconciler}::oid
      AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())`.execute(
    db,
  );
  const row = r.rows[0];
  return row === undefined ? null : { pid: row.pid, name: row.name ?? '' };
}

/** Ends the session leading as `pid` (a leader judged dead: wedged with its connection open). */
export async function deposeLeader(db: Db, pid: number): Promise<boolean> {
  const r = await sql<{ ok: boolean }>`SELECT pg_terminate_backend(${pid}::int4) AS ok`.execute(db);
  return r.rows[0]?.ok === true;
}

/** Takes or waits for the leader lock; resolves after the first try (`leader` or `follower`, or `lost`). */
export async function holdLeaderLock(config: LeaderLockConfig): Promise<LeaderLock> {
  const { timers } = config;
  let stopped = false;
  let client: pg.Client | undefined;
  let state: LeaderState = 'lost';
  let lead: AbortController | undefined;
  let failures = 0;
  let retryTimer: unknown;
  let pingTimer: unknown;
  const checked = checkEachConnection(config.checkSession, config.onError);

  const report = (next: LeaderState) => {
    if (state === next) return;
    if (state === 'leader') lead?.abort(new LeadershipLostError(`${config.name} leads no more`));
    lead = next === 'leader' ? new AbortController() : undefined;
    state = next;
    try {
      config.onState(next);
    } catch (error) {
      config.onError(error instanceof Error ? error : new Error(String(error)));
    }
  };
  const close = (c: pg.Client) => endWithin(c, timers, config.closeTimeoutMs);
  const lose = (c: pg.Client, error: unknown) => {
    if (client !== c) return;
    client = undefined;
    timers.clearTimeout(pingTimer);
    destroy(c);
    if (stopped) return;
    if (state === 'leader')
      config.onError(
        new LeadershipLostError(`${config.name} lost its connection`, { cause: error }),
      );
    report('lost');
    const wait = listenRetryDelay(failures++, config.retryMinMs, config.retryMaxMs);
    retryTimer = timers.setTimeout(() => void attempt(), wait);
  };
  const ping = (c: pg.Client) => {
    pingTimer = timers.setTimeout(() => {
      c.query(withDeadline('SELECT 1', config.pingMs)).then(
        () => {
          if (client === c) ping(c);
        },
        (error: unknown) => lose(c, error),
      );
    }, config.pingMs);
  };
  const becomeLeader = (c: pg.Client) => {
    failures = 0;
    report('leader');
    ping(c);
  };
  /** Waits for the lock, deadline after deadline, until it is ours or the connection is lost. */
  const wait = async (c: pg.Client) => {
    while (client === c && !stopped) {
      try {
        await c.query(withDeadline(LOCK_SQL, config.waitMs + config.pingMs));
      } catch (error) {
        if (client !== c) return;
        if (errorCode(error) !== LOCK_NOT_AVAILABLE) {
          lose(c, error);
          return;
        }
        failures = 0;
        try {
          config.onWaited?.();
        } catch (e) {
          config.onError(e instanceof Error ? e : new Error(String(e)));
        }
        continue;
      }
      if (client === c && !stopped) becomeLeader(c);
      return;
    }
  };
  const attempt = async () => {
    if (stopped) return;
    const c = new pg.Client({
      ...config.client,
      application_name: config.name,
      lock_timeout: config.waitMs,
      // The wait is bounded by lock_timeout alone.
      statement_timeout: 0,
      query_timeout: config.pingMs,
    });
    client = c;
    c.on('error', (error) => lose(c, error));
    c.on('end', () => lose(c, new Error('leader lock connection ended')));
    let ok = false;
    try {
      await c.connect();
      // A leader lock taken on a pooled server connection is never free again.
      await checked(c);
      // PG 14+: a wait whose client is gone ends within a second (older servers: at its deadline).
      await c.query('SET client_connection_check_interval = 1000').catch(() => undefined);
      ok = (await c.query<{ ok: boolean }>(TRY_SQL)).rows[0]?.ok === true;
    } catch (error) {
      lose(c, error);
      return;
    }
    if (client !== c || stopped) return;
    if (ok) becomeLeader(c);
    else {
      report('follower');
      void wait(c);
    }
  };

  await attempt();
  const finish = () => {
    if (stopped) return undefined;
    stopped = true;
    timers.clearTimeout(retryTimer);
    timers.clearTimeout(pingTimer);
    lead?.abort(new LeadershipLostError(`${config.name} stopped`));
    const c = client;
    client = undefined;
    return c;
  };
  return {
    state: () => state,
    leadership: () => lead?.signal ?? null,
    async release() {
      const c = finish();
      // Ending the session frees the lock, and ends a wait still queued for it.
      if (c !== undefined) {
        destroyIfWaiting(c, state);
        await close(c);
      }
    },
    drop() {
      const c = finish();
      if (c !== undefined) destroy(c);
    },
  };
}

/** A query with its own client deadline (node-postgres reads `query_timeout` per query; its types omit it). */
function withDeadline(text: string, ms: number): pg.QueryConfig {
  return { text, query_timeout: ms } as pg.QueryConfig;
}

/** The socket goes now, as a killed process's would (the server sees EOF). */
function destroy(c: pg.Client): void {
  (c as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
}

/** A queued wait would hold `end()` until its deadline: a follower's socket is cut instead. */
function destroyIfWaiting(c: pg.Client, state: LeaderState): void {
  if (state !== 'leader') destroy(c);
}
