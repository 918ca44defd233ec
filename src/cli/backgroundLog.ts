/**
 * How `roundtable start` logs what the runtime reports in the background
 * (its `onError`): errors and notices of the cluster alike. Another boot
 * whose heartbeat row is gone stopped on purpose (a deploy's SIGTERM deletes
 * the row): news at `info`, not a warning on every node at every rolling
 * deploy. A boot that died (its lock freed, its beat stale, replaced) and
 * everything else stay warnings. While the store is out, every loop of the
 * node fails each period (the feed's poll, the liveness watch, the beats):
 * one warning per kind of outage per window, the next one saying how many
 * it stood for (`repeated`), instead of several lines a second. The same
 * goes for a listener or an inspection observer that throws: it throws on
 * every card or frame (about twenty frames a job), so it is said once per
 * window per kind too.
 */
import type { Logger } from 'pino';
import { OwnerDownNotice } from '../actors/clusterLivenessWiring.js';
import { RuntimeListenerError } from '../actors/runtimeListenerError.js';
import { transientReason } from '../db/index.js';
import { InspectObserverError, ListenerError } from '../supervisor/errors.js';

/** What it tells apart (re-exported for the examples below, which run as tests). */
export { OwnerDownNotice, RuntimeListenerError };

/**
 * The level and message a background report is logged with.
 *
 * @example
 * ```ts
 * backgroundRecord(new OwnerDownNotice('b@1', 'no_beat')).level // => 'info'
 * backgroundRecord(new OwnerDownNotice('b@1', 'lock_released')).level // => 'warn'
 * backgroundRecord(new OwnerDownNotice('b@1', 'replaced', true)).level // => 'info'
 * backgroundRecord(new Error('boom')).msg // => 'background error'
 * ```
 */
export function backgroundRecord(error: unknown): {
  level: 'info' | 'warn';
  fields: Record<string, unknown>;
  msg: string;
} {
  if (error instanceof OwnerDownNotice) {
    // Found dead at this boot's first look: its death was news to the nodes
    // that saw it happen; every later start would repeat it for as long as
    // its row is kept (100 stale windows).
    if (error.atStart)
      return {
        level: 'info',
        fields: { owner: error.owner, reason: error.reason },
        msg: 'a boot gone before this one started: runs it left are adopted or queued again',
      };
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

/**
 * The kind of a report that comes in floods when it comes at all (a store
 * outage, a listener or observer that throws), said once per window; none
 * for the others, which are each said.
 *
 * @example
 * ```ts
 * floodKind(new RuntimeListenerError('board', new Error('bug'))) // => 'listener:board'
 * floodKind(new Error('a bug')) // => undefined
 * ```
 */
export function floodKind(error: unknown): string | undefined {
  if (error instanceof RuntimeListenerError) return `listener:${error.listener}`;
  if (error instanceof InspectObserverError) return 'inspect_observer';
  if (error instanceof ListenerError) return `supervisor_listener:${error.eventType}`;
  return transientReason(error);
}

/** How long one kind of store outage (or of any flood, `floodKind`) is said once. */
export const OUTAGE_WINDOW_MS = 30_000;

/** Logs background reports at the level `backgroundRecord` gives them, a flood (`floodKind`) once per window. */
export class BackgroundLog {
  /** Per kind of transient store error: when it was last said, and how many since. */
  private readonly said = new Map<string, { at: number; since: number }>();

  constructor(
    private readonly logger: Pick<Logger, 'info' | 'warn'>,
    private readonly now: () => number = Date.now,
    private readonly windowMs = OUTAGE_WINDOW_MS,
  ) {}

  report(error: unknown): void {
    const r = backgroundRecord(error);
    const reason = floodKind(error);
    if (reason !== undefined) {
      const last = this.said.get(reason);
      const t = this.now();
      if (last !== undefined && t - last.at < this.windowMs) {
        last.since += 1;
        return;
      }
      this.said.set(reason, { at: t, since: 0 });
      // The kind on every line of a flood, so a grep finds its first one too.
      r.fields =
        last !== undefined && last.since > 0
          ? { ...r.fields, reason, repeated: last.since }
          : { ...r.fields, reason };
    }
    this.logger[r.level](r.fields, r.msg);
  }
}
