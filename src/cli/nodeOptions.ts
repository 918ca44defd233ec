/**
 * How the CLI's settings become the runtime's and the board's options where
 * the two differ in shape: retention (0 means for ever), cluster liveness
 * (which locks a node takes on its store, and how fast the beats it is
 * judged by go) and the board's connections per address.
 */
import type { DbHandle } from '../db/index.js';
import type { CliConfig } from './cliConfig.js';
import { CliError } from './exitCodes.js';

/**
 * The runtime's retention from the CLI's: 0 keeps finished work for ever.
 *
 * @example
 * ```ts
 * retention({ retentionMs: 3600000 }) // => 3600000
 * retention({ retentionMs: 0 }) // => null
 * ```
 */
export function retention(config: Pick<CliConfig, 'retentionMs'>): number | null {
  return config.retentionMs === 0 ? null : config.retentionMs;
}

/** The heartbeat options that make a node's beat vouch for `deadAfterMs`: five beats. */
function beatWindow(deadAfterMs: number): {
  heartbeatMs: number;
  heartbeatStaleBeats: number;
} {
  return { heartbeatMs: Math.max(1, Math.round(deadAfterMs / 5)), heartbeatStaleBeats: 5 };
}

/**
 * Watching the beats when no boot holds a lock: the rows read every tenth of
 * the window, between 250 ms and a second.
 */
function beatsWatch(deadAfterMs: number) {
  return {
    watchBeats: true,
    ...beatWindow(deadAfterMs),
    livenessPollMs: Math.min(1_000, Math.max(250, Math.round(deadAfterMs / 10))),
  };
}

/**
 * Behind a transaction pooler no boot holds a lock, so a death is a beat
 * gone stale, watched for on the rows: by default beats every 2 s, stale
 * after 5 (10 s, so a thread held a few seconds by a large board load or a
 * long collection still beats in time), the rows read every second. Without
 * the watch a death waited for the next periodic pass, up to `reconcileMs`
 * (a minute) after three default beats (another minute).
 */
export const POOLED_DEAD_AFTER_MS = 10_000;

/** The runtime's liveness options as `liveness` gives them. */
export type LivenessOptions<S> = {
  bootLock?: S;
  reconcileLock?: boolean;
  watchBeats?: boolean;
  heartbeatMs?: number;
  heartbeatStaleBeats?: number;
  livenessPollMs?: number;
};

/**
 * The cluster-liveness options: each boot's lock on a Postgres server (off
 * behind a pooler), the one-Reconciler lock, which PGlite's single
 * connection cannot take, nor a transaction pooler's borrowed one hold, and
 * the beats' window (`--dead-after-ms`). A node with no lock to be judged by
 * (behind a pooler, or `--boot-lock off` with a window given) is watched on
 * its beats; each row carries its own window, so nodes that differ in it
 * (a rolling deploy that changes it) judge each other right.
 *
 * @example
 * ```ts
 * const base = { bootLock: 'auto', reconcileLock: 'auto', pooler: 'none' } as const;
 * const server = { engine: 'postgres' } as const;
 * liveness(base, server) // => { bootLock: server }
 * liveness({ ...base, deadAfterMs: 30000 }, server) // => { bootLock: server, heartbeatMs: 6000, heartbeatStaleBeats: 5 }
 * liveness({ ...base, pooler: 'transaction' }, server).heartbeatMs // => 2000
 * liveness({ ...base, pooler: 'transaction', deadAfterMs: 30000 }, server).heartbeatMs // => 6000
 * liveness({ ...base, bootLock: 'off', deadAfterMs: 5000 }, server) // => { watchBeats: true, heartbeatMs: 1000, heartbeatStaleBeats: 5, livenessPollMs: 500 }
 * liveness({ ...base, bootLock: 'off' }, server) // => {}
 * ```
 */
export function liveness<S extends Pick<DbHandle, 'engine'>>(
  config: Pick<CliConfig, 'bootLock' | 'reconcileLock' | 'pooler' | 'deadAfterMs'>,
  store: S,
): LivenessOptions<S> {
  if (config.reconcileLock === 'on' && store.engine === 'pglite')
    throw new CliError(
      'CLI_CONFIG',
      '--reconcile-lock on needs a Postgres server (PGlite has one connection: a node on it is alone)',
    );
  const dead = config.deadAfterMs;
  if (config.pooler === 'transaction') {
    // Taken on a pooled server connection, the lock would outlive its node
    // there and no Reconciler would run again anywhere.
    if (config.reconcileLock === 'on')
      throw new CliError(
        'CLI_CONFIG',
        '--reconcile-lock on cannot work behind a transaction pooler: a session lock stays on the pooled server connection that took it (leave it auto: every node runs its passes, whose writes are compare-and-sets)',
      );
    return { reconcileLock: false, ...beatsWatch(dead ?? POOLED_DEAD_AFTER_MS) };
  }
  const reconcileLock =
    config.reconcileLock === 'auto' ? {} : { reconcileLock: config.reconcileLock === 'on' };
  if (config.bootLock === 'off') return { ...reconcileLock, ...(dead ? beatsWatch(dead) : {}) };
  // The lock sees a crash at once; the beats are the backstop for a wedged node.
  return { bootLock: store, ...reconcileLock, ...(dead ? beatWindow(dead) : {}) };
}

/**
 * The board's limits for `--per-address`: one number for the connections
 * of an address, of which its WebSockets are a part.
 *
 * @example
 * ```ts
 * perAddressLimits(2000) // => { maxTcpConnectionsPerAddress: 2000, maxConnectionsPerAddress: 2000 }
 * ```
 */
export function perAddressLimits(perAddress: number): {
  maxTcpConnectionsPerAddress: number;
  maxConnectionsPerAddress: number;
} {
  return { maxTcpConnectionsPerAddress: perAddress, maxConnectionsPerAddress: perAddress };
}
