/**
 * Whether a dedicated connection of ours really is a server session of its
 * own. Everything session-scoped the node does (LISTEN for other nodes'
 * ticks, the boot lock other nodes read its death from, the Reconciler's
 * leader lock) rests on it, and a transaction pooler that accepts the
 * startup settings (PgBouncer with `ignore_startup_parameters` listing
 * them) breaks it without an error: each statement of that "session" runs
 * on whichever server connection is free, so a LISTEN stays on a pooled
 * connection that serves other clients (its notifications reach them, or
 * are dropped), and a session lock outlives the node that took it (nobody
 * sees the node die, and a leader lock is never free again). The settings
 * themselves are dropped too: `statement_timeout` silently 0.
 *
 * The probe asks the one thing that matters: a notification sent by another
 * connection reaches a LISTEN of ours. A session hears it within a round
 * trip; behind a transaction pooler the listening server connection is not
 * linked to our client when it arrives, so it never does. Sent again
 * `resendMs` after each one returned (a slow server only delays the
 * answer), given up after `deadlineMs`.
 *
 * Asked at boot (`probeSession`, before any lock or LISTEN) and again of
 * every connection the listener and the locks open, cut ones' replacements
 * included (`probeConnection` through `checkEachConnection`): a running
 * node whose address leads to such a pooler after a cut keeps its listener
 * and locks `lost` (polling, taking no grants) and says why, rather than
 * holding a lock nobody can see it lose.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { endWithin, type ListenTimers } from './dedicatedClient.js';
import { PooledSessionError } from './errors.js';

/** How a probe asks: the NOTIFY from elsewhere, its deadline and its resend. */
export interface ConnectionProbe {
  /** Sends `NOTIFY channel, payload` on another connection (the pool). */
  notify(channel: string, payload: string): Promise<void>;
  /** How long to wait for the notification in all. */
  deadlineMs: number;
  /** How often it is sent again meanwhile. */
  resendMs: number;
  timers: ListenTimers;
}

export interface SessionProbeConfig extends ConnectionProbe {
  /** The dedicated connection's config: the same as the listener's and the locks'. */
  client: pg.ClientConfig;
  /** Deadline for closing the probe's connection. */
  closeTimeoutMs: number;
}

/**
 * Checks a dedicated connection of ours (connected, nothing else in flight on
 * it) before it is used: its listener or lock connects again after a cut, and
 * the address may lead to a pooler by then. Rejects as `probeConnection`.
 */
export type SessionCheck = (client: pg.Client) => Promise<void>;

/**
 * The check a listener or lock runs on each connection it opens, saying a
 * `PooledSessionError` once per stretch of failed attempts (each retry of
 * the stretch would say it again) to `onError`; every failure still
 * rejects, so the attempt counts as failed and is retried with backoff.
 * No check (PGlite, `pooler: 'transaction'`): nothing to do.
 */
export function checkEachConnection(
  check: SessionCheck | undefined,
  onError: (error: Error) => void,
): SessionCheck {
  let said = false;
  return async (c) => {
    if (check === undefined) return;
    try {
      await check(c);
      said = false;
    } catch (error) {
      if (error instanceof PooledSessionError && !said) {
        said = true;
        onError(error);
      }
      throw error;
    }
  };
}

/** Defaults: a session answers in milliseconds; a loaded server gets seconds. */
export const SESSION_PROBE = { deadlineMs: 5_000, resendMs: 250 } as const;

/**
 * A channel no other client listens on: `rt_session_probe_` and 16 hex digits.
 *
 * @example
 * ```ts
 * /^rt_session_probe_[0-9a-f]{16}$/.test(probeChannel()) // => true
 * probeChannel() === probeChannel() // => false
 * ```
 */
export function probeChannel(): string {
  return `rt_session_probe_${randomBytes(8).toString('hex')}`;
}

/**
 * What the deadline means: "not a session" only once a NOTIFY came back
 * from the server (committed, so already on its way to every listening
 * session) and still nothing reached us. If none came back, the store was
 * too slow to ask, which says nothing about the connection: a plain error,
 * which callers treat as a failed attempt, never as a verdict.
 *
 * @example
 * ```ts
 * verdictAtDeadline(5000, 3).name // => 'PooledSessionError'
 * verdictAtDeadline(5000, 0).name // => 'Error'
 * ```
 */
export function verdictAtDeadline(deadlineMs: number, returned: number): Error {
  return returned > 0
    ? new PooledSessionError(deadlineMs, returned)
    : new Error(
        `no NOTIFY sent to probe the session came back within ${deadlineMs} ms: the store is too slow to tell whether the connection is a session`,
      );
}

/**
 * Resolves once a notification from another connection reached a LISTEN on
 * `c` (a connected client), then stops listening on the probe's channel;
 * rejects with `PooledSessionError` (`DB_POOLED_SESSION`) when none did by
 * the deadline after a NOTIFY came back, and with the driver's error when
 * the server could not be asked (the connection lost meanwhile included).
 */
export async function probeConnection(c: pg.Client, o: ConnectionProbe): Promise<void> {
  const { timers } = o;
  const channel = probeChannel();
  // Lost while no query is in flight (waiting for the notification): said
  // as the driver's error, never as a verdict. Lost during a query, that
  // query rejects.
  let lost: ((error: Error) => void) | undefined;
  const onError = (error: Error) => lost?.(error);
  const onEnd = () => lost?.(new Error('the connection ended while it was probed'));
  const onNotification = (m: pg.Notification) => {
    if (m.channel === channel) heard?.();
  };
  let heard: (() => void) | undefined;
  c.on('error', onError);
  c.on('end', onEnd);
  c.on('notification', onNotification);
  let resend: unknown;
  /** Answered or given up: a NOTIFY still in flight schedules no other. */
  let over = false;
  let deadline: unknown;
  try {
    await c.query(`LISTEN ${channel}`);
    await new Promise<void>((resolve, reject) => {
      lost = reject;
      heard = resolve;
      const sent = { n: 0, returned: 0 };
      // One NOTIFY at a time: the next leaves `resendMs` after the last one
      // returned, so a slow server is not sent a pile of them.
      const send = () => {
        sent.n += 1;
        o.notify(channel, String(sent.n)).then(() => {
          sent.returned += 1;
          if (!over) resend = timers.setTimeout(send, o.resendMs);
        }, reject);
      };
      deadline = timers.setTimeout(
        () => reject(verdictAtDeadline(o.deadlineMs, sent.returned)),
        o.deadlineMs,
      );
      send();
    });
  } finally {
    over = true;
    lost = undefined;
    heard = undefined;
    timers.clearTimeout(resend);
    timers.clearTimeout(deadline);
    c.off('error', onError);
    c.off('end', onEnd);
    c.off('notification', onNotification);
  }
  // The connection goes on to its real use: no probe channel left on it.
  await c.query(`UNLISTEN ${channel}`);
}

/**
 * Resolves once a notification from another connection reached a LISTEN on
 * a connection opened with `config.client` (closed after); rejects as
 * `probeConnection`, and with the driver's error when it cannot connect.
 */
export async function probeSession(config: SessionProbeConfig): Promise<void> {
  const c = new pg.Client(config.client);
  // An 'error' with no listener would be thrown; the probe says it itself.
  c.on('error', () => {});
  try {
    await c.connect();
    await probeConnection(c, config);
  } finally {
    await endWithin(c, config.timers, config.closeTimeoutMs);
  }
}
