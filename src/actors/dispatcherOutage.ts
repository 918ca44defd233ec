/**
 * The store's outage as the dispatcher (src/actors/dispatcher.ts) lives
 * through it: how many ticks in a row failed (the backoff before the next
 * one), since when the store has been failing and with what (commands are
 * answered `unavailable` once that is long enough, carrying it as their
 * cause), the timer of the retry, and the ops it made wait past their
 * deadline.
 *
 * Why its own concept: this state is read and written only while ticks
 * fail, and the dispatcher's tick loop needs just two questions of it (is a
 * retry waiting, does the outage answer commands). Kept in the dispatcher,
 * four fields and the rules over them sat among the loop's own; here they
 * change together. The pure rules it applies are in dispatcherFailure.ts;
 * a store closed for good is not an outage and ends the dispatch instead
 * (dispatcher.ts, `closed`).
 */

import { backoffDelay } from '../common/backoff.js';
import { outageAnswered, outageMessage } from './dispatcherFailure.js';
import type { Outbox } from './dispatcherOutbox.js';
import { type DispatcherOptions, DispatchUnavailableError } from './dispatcherTypes.js';

/** The options an outage is timed, backed off and answered by. */
export type OutageOptions = Pick<
  DispatcherOptions,
  'clock' | 'backoff' | 'opDeadlineMs' | 'commandOutageMs'
>;

export class StoreOutage {
  private failures = 0;
  /** When the first tick of the current run of transient failures failed; null once one commits. */
  private failingSince: number | null = null;
  private lastFailure: unknown = null;
  private retryTimer: unknown = null;

  constructor(private readonly o: OutageOptions) {}

  /** Whether a failed tick's retry waits out its backoff: no tick leaves meanwhile. */
  get retrying(): boolean {
    return this.retryTimer !== null;
  }

  /** A tick committed: the run of failures, if any, is over. */
  committed(): void {
    this.failures = 0;
    this.failingSince = null;
  }

  /** A tick failed with `error`; a `transient` one is the store failing. */
  failed(error: unknown, transient: boolean): void {
    this.failures += 1;
    // Only an outage starts the clock: a bad op's split is not the store failing.
    if (transient) {
      this.failingSince ??= this.o.clock.now();
      this.lastFailure = error;
    }
  }

  /** Whether a caller's command is answered `unavailable` at `now` instead of waiting. */
  answersCommands(now: number): boolean {
    const limit = this.o.commandOutageMs;
    if (limit === undefined) return false;
    return outageAnswered({ failingSince: this.failingSince, now, commandOutageMs: limit });
  }

  /** What a command's caller hears once the outage answers it. */
  unavailable(op: string, sent: boolean, now: number): DispatchUnavailableError {
    const downMs = now - (this.failingSince ?? now);
    return new DispatchUnavailableError(outageMessage({ op, sent, downMs }), {
      cause: this.lastFailure,
    });
  }

  /**
   * Callers whose op waited in `outbox` past the deadline are told, and so
   * are the commands once the outage answers them; their ops are removed,
   * so no tick sends them any more.
   */
  answerLate(outbox: Outbox, cause: unknown): void {
    const now = this.o.clock.now();
    for (const e of outbox.expire(now - this.o.opDeadlineMs)) {
      const message = outageMessage({ op: e.op.op, sent: e.sent === true, downMs: now - e.at });
      e.reject(new DispatchUnavailableError(message, { cause }));
    }
    if (!this.answersCommands(now)) return;
    for (const e of outbox.withdraw((x) => x.command === true))
      e.reject(this.unavailable(e.op.op, e.sent === true, now));
  }

  /** Runs `retry` once the backoff for the failures so far has passed. */
  retryAfterBackoff(retry: () => void): void {
    const delay = backoffDelay(this.failures - 1, {
      minMs: this.o.backoff.baseMs,
      maxMs: this.o.backoff.maxMs,
    });
    this.retryTimer = this.o.clock.setTimeout(() => {
      this.retryTimer = null;
      retry();
    }, delay);
  }

  /** Cancels a retry waiting out its backoff (the dispatcher stopped). Idempotent. */
  cancelRetry(): void {
    if (this.retryTimer !== null) this.o.clock.clearTimeout(this.retryTimer);
    this.retryTimer = null;
  }
}
