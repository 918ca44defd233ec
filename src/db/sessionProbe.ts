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
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { PooledSessionError } from './errors.js';
import { endWithin, type ListenTimers } from './listen.js';

export interface SessionProbeConfig {
  /** The dedicated connection's config: the same as the listener's and the locks'. */
  client: pg.ClientConfig;
  /** Sends `NOTIFY channel, payload` on another connection (the pool). */
  notify(channel: string, payload: string): Promise<void>;
  /** How long to wait for the notification in all. */
  deadlineMs: number;
  /** How often it is sent again meanwhile. */
  resendMs: number;
  timers: ListenTimers;
  /** Deadline for closing the probe's connection. */
  closeTimeoutMs: number;
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
 * Resolves once a notification from another connection reached a LISTEN on
 * a connection opened with `config.client`; rejects with
 * `PooledSessionError` (`DB_POOLED_SESSION`) when none did by the deadline,
 * and with the driver's error when the server could not be asked.
 */
export async function probeSession(config: SessionProbeConfig): Promise<void> {
  const { timers } = config;
  const channel = probeChannel();
  const c = new pg.Client(config.client);
  // Lost while no query is in flight (waiting for the notification): said
  // below as the driver's error, never as a verdict. Lost during a query,
  // that query rejects; without a listener the event would be thrown.
  let lost: ((error: Error) => void) | undefined;
  c.on('error', (error) => lost?.(error));
  c.on('end', () => lost?.(new Error('the probe connection ended')));
  let resend: unknown;
  /** Answered or given up: a NOTIFY still in flight schedules no other. */
  let over = false;
  let deadline: unknown;
  try {
    await c.connect();
    await c.query(`LISTEN ${channel}`);
    await new Promise<void>((resolve, reject) => {
      lost = reject;
      const sent = { n: 0 };
      c.on('notification', (m) => {
        if (m.channel === channel) resolve();
      });
      // One NOTIFY at a time: the next leaves `resendMs` after the last one
      // returned, so a slow server is not sent a pile of them.
      const send = () => {
        sent.n += 1;
        config.notify(channel, String(sent.n)).then(() => {
          if (!over) resend = timers.setTimeout(send, config.resendMs);
        }, reject);
      };
      deadline = timers.setTimeout(
        () => reject(new PooledSessionError(config.deadlineMs, sent.n)),
        config.deadlineMs,
      );
      send();
    });
  } finally {
    over = true;
    lost = undefined;
    timers.clearTimeout(resend);
    timers.clearTimeout(deadline);
    c.removeAllListeners('notification');
    await endWithin(c, timers, config.closeTimeoutMs);
  }
}
