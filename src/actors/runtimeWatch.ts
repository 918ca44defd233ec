/**
 * Whether anyone watches this node's board, told to the other nodes through
 * this boot's heartbeat row (`node_heartbeats.watching`, migration 12).
 *
 * Why: a tick that leaves nothing to grant needs no tick anywhere else; it
 * only moves cards. Every listening backend of the database is woken, and
 * spends a transaction, for every notification sent, whatever its channel
 * (PostgreSQL before 19), so with 3 busy nodes the listeners alone cost
 * about a third of a commit per job. A full tick therefore notifies only if
 * another boot's row says its board is watched; a node nobody watches learns
 * other nodes' changes from its own ticks' replies and its poll.
 *
 * The flag goes up at once when the first watcher comes (then the feed
 * catches up on what it was not told meanwhile), and down `lingerMs` after
 * the last one leaves, so a page reload does not write twice. Writes run one
 * at a time, the last wish wins, and a failed write is tried again after
 * `lingerMs`. The store writes the flag under the tick's lock
 * (src/db/nodeHeartbeats.ts `setWatching`): a tick either sees it or
 * committed before it, and the catch-up read after the write finds that one.
 */
import type { SupervisorClock } from '../supervisor/clock.js';
import { afterStoreFailure } from './afterStoreFailure.js';

export interface BoardWatchOptions {
  clock: SupervisorClock;
  /** How long the flag stays up after the last watcher leaves. */
  lingerMs: number;
  /** Writes the flag; false when the boot has no heartbeat row yet (tried again). */
  write(watching: boolean): Promise<boolean>;
  /** Reads what other nodes changed since the last tick this node has all of. */
  catchUp(): void;
  /** Told when the first watcher comes (true) and the last one leaves (false), at once. */
  onWatched?(watched: boolean): void;
  onError(error: unknown): void;
  track<T>(work: Promise<T>): Promise<T>;
}

export class BoardWatch {
  private watchers = 0;
  /** What the row should say. A new boot's row says watched (the column's default). */
  private wanted = true;
  /** What the row says: a new boot's row says watched; 'unknown' after a failed write. */
  private written: boolean | 'unknown' = true;
  private writing = false;
  private timer: unknown = null;
  private started = false;
  private stopped = false;

  constructor(private readonly o: BoardWatchOptions) {}

  /** Whether the other nodes are asked to tell this one of every tick. */
  watched(): boolean {
    return this.watchers > 0;
  }

  /** After the boot's first beat: a board nobody watches says so after the linger. */
  start(): void {
    this.started = true;
    if (this.watchers === 0) this.lowerSoon();
  }

  stop(): void {
    this.stopped = true;
    this.clearTimer();
  }

  /** Someone looks at the board until they call the function returned (once counts). */
  watch(): () => void {
    this.watchers += 1;
    if (this.watchers === 1) {
      this.clearTimer();
      this.wanted = true;
      this.flush();
      this.o.onWatched?.(true);
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.watchers -= 1;
      if (this.watchers === 0) {
        this.lowerSoon();
        this.o.onWatched?.(false);
      }
    };
  }

  private lowerSoon(): void {
    if (!this.started || this.stopped) return;
    this.clearTimer();
    this.timer = this.o.clock.setTimeout(() => {
      this.timer = null;
      if (this.watchers > 0) return;
      this.wanted = false;
      this.flush();
    }, this.o.lingerMs);
  }

  private clearTimer(): void {
    if (this.timer !== null) this.o.clock.clearTimeout(this.timer);
    this.timer = null;
  }

  /** Brings the row to `wanted`, one write at a time. */
  private flush(): void {
    if (!this.started || this.stopped || this.writing) return;
    const value = this.wanted;
    if (value === this.written) return;
    this.writing = true;
    void this.o
      .track(this.o.write(value))
      .then(
        (stored) => {
          // Full ticks went unsaid while the row said unwatched: read them now.
          if (value) this.o.catchUp();
          // No row yet (its first beat failed): the beats retry it, and so do we.
          if (stored) this.written = value;
          else this.retryLater();
        },
        (error: unknown) => {
          this.o.onError(error);
          // A closed store never answers again: the flag is not written again.
          if (afterStoreFailure(error) === 'halt') this.stop();
          // It may have committed or not: written again whatever is wanted next.
          this.written = 'unknown';
          // A watcher gets its catch-up anyway; the poll covers the rest.
          if (value) this.o.catchUp();
          this.retryLater();
        },
      )
      .finally(() => {
        this.writing = false;
        if (this.timer === null) this.flush();
      });
  }

  /** A write again after the linger, unless a timer already pending will flush. */
  private retryLater(): void {
    if (this.stopped || this.timer !== null) return;
    this.clearTimer();
    this.timer = this.o.clock.setTimeout(() => {
      this.timer = null;
      this.flush();
    }, this.o.lingerMs);
  }
}
