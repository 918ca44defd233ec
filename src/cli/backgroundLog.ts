/**
 * How `roundtable start` logs what the runtime reports in the background
 * (its `onError`): errors and notices of the cluster alike. Another boot
 * whose heartbeat row is gone stopped on purpose (a deploy's SIGTERM deletes
 * the row): news at `info`, not a warning on every node at every rolling
 * deploy. A boot that died (its lock freed, its beat stale, replaced) and
 * everything else stay warnings.
 */
import type { Logger } from 'pino';
import { OwnerDownNotice } from '../actors/clusterLivenessWiring.js';

/** The notice it tells apart (re-exported for the examples below, which run as tests). */
export { OwnerDownNotice };

/**
 * The level and message a background report is logged with.
 *
 * @example
 * ```ts
 * backgroundRecord(new OwnerDownNotice('b@1', 'no_beat')).level // => 'info'
 * backgroundRecord(new OwnerDownNotice('b@1', 'lock_released')).level // => 'warn'
 * backgroundRecord(new Error('boom')).msg // => 'background error'
 * ```
 */
export function backgroundRecord(error: unknown): {
  level: 'info' | 'warn';
  fields: Record<string, unknown>;
  msg: string;
} {
  if (error instanceof OwnerDownNotice) {
    return error.reason === 'no_beat'
      ? {
          level: 'info',
          fields: { owner: error.owner, reason: error.reason },
          msg: 'another boot stopped (its heartbeat row is gone): runs it left are adopted or queued again',
        }
      : {
          level: 'warn',
          fields: { owner: error.owner, reason: error.reason },
          msg: 'another boot is gone: its runs are adopted or queued again now',
        };
  }
  return { level: 'warn', fields: { err: error }, msg: 'background error' };
}

/** Logs one background report at the level `backgroundRecord` gives it. */
export function logBackground(logger: Pick<Logger, 'info' | 'warn'>, error: unknown): void {
  const r = backgroundRecord(error);
  logger[r.level](r.fields, r.msg);
}
