/**
 * How a node learns of other nodes' ticks: a NOTIFY on `roundtable_tick`
 * (payload: the tick number) when it can listen, and a poll of the tick
 * number `pollMs` after the last of its own ticks' replies (each covers
 * every tick up to its own), so a node behind a transaction pooler (where
 * LISTEN does not work) or with a lost listener is at most a poll behind. Either way the feed reads what changed since the last tick it
 * had all of (`readChanges`), hands it to the board and the line book, and
 * pokes the dispatcher (room may have freed, work may have arrived).
 *
 * Ticks this node made itself are applied from their replies; the feed only
 * reads when there is a gap (another node ticked in between), so one node
 * alone never reads its own writes back. Every tick the node sends says the
 * last tick it has all of (`since`), and its reply carries what other
 * nodes' ticks changed after that (the same rows the read returns): so a
 * tick heard while one of this node's own is on its way, or about to leave
 * (a `grantable` one pokes the dispatcher), is not read, its changes ride
 * that tick's reply. Only a tick the reply turns out not to cover (it
 * committed after ours), or one heard while this node sends nothing, is
 * read. With 3 busy nodes that is most of the reads gone.
 */
import { TICK_CHANNEL } from '../db/sql/tickChannel.js';
import type { ChangedSession, TickResult, UserLine } from '../db/tickTypes.js';
import type { SupervisorClock } from '../supervisor/clock.js';
import { afterStoreFailure } from './afterStoreFailure.js';

/** The listen half of the store handle (src/db/listen.ts); absent: poll only. */
export interface TickNotifications {
  listen(
    channel: string,
    onPayload: (payload: string) => void,
    onState?: (state: 'listening' | 'lost') => void,
  ): Promise<() => Promise<void>>;
  /** Whether the listener's connection is a session of its own (the store handle's); run before it listens. */
  probeSession?: (() => Promise<void>) | null;
}

export interface FeedOptions {
  /** This boot's owner: NOTIFYs of its own ticks are skipped (their replies were applied). */
  owner: string;
  clock: SupervisorClock;
  pollMs: number;
  notifications?: TickNotifications;
  currentTick(): Promise<number>;
  /** `skipTicks`: this node's own ticks after `since`, whose replies it applied. */
  readChanges(
    since: number,
    skipTicks: readonly number[],
  ): Promise<{
    tick: number;
    sessions: ChangedSession[];
    lines: UserLine[];
    running?: number;
  }>;
  /** Rows and lines another node changed, in tick order. */
  onChanges(changes: {
    sessions: ChangedSession[];
    lines: UserLine[];
    running?: number;
    /** The tick these changes are exact as of. */
    tick: number;
  }): void;
  /**
   * A tick newer than any this node had seen, after which a grant may be
   * possible (not called for another node's tick that left none possible).
   */
  onNewerTick(tick: number): void;
  onError(error: unknown): void;
  track<T>(work: Promise<T>): Promise<T>;
}

/**
 * Most changed sessions a tick's reply carries (the tick's `changesMax`);
 * past that the reply only says so and the feed reads them. A reply builds
 * them inside the lock every node's tick waits for, ~25 us per session on
 * the server: with three nodes enqueueing at once, sets of ~1,000 sessions
 * held it ~25 ms per tick. A read builds the same rows off the lock while
 * the next tick runs. A node running a steady stream of short jobs changes
 * ~40 sessions a tick, so another node one or two ticks behind still gets
 * them with its reply.
 */
export const RIDE_MAX_CHANGES = 100;

/** Most own ticks a read names to skip (readChanges' bound); skipping fewer only reads more. */
const MAX_SKIPPED_TICKS = 10_000;

export class TickFeed {
  /** Every change up to this tick has been applied here. */
  private seen = 0;
  /** The newest tick heard of (NOTIFY or poll); above `seen`: something is still to learn. */
  private heardUpTo = 0;
  /** This node's ticks sent and not yet answered (their replies bring what others changed). */
  private onTheWay = 0;
  /**
   * When the last reply of this node's own ticks landed: it covered every
   * tick up to its own (`since`), so a node that ticks more often than the
   * poll period needs no poll; its polls resume a period after its last reply.
   */
  private coveredAt = Number.NEGATIVE_INFINITY;
  /** Replies `landed` already counted (`own` comes for the same reply later). */
  private readonly landedReplies = new WeakSet<TickResult>();
  /**
   * This node's ticks after `seen`, whose replies it applied: a read skips
   * the sessions they changed last. After a reply whose changes were
   * deferred, `seen` stays behind the node's own ticks until the read lands,
   * and without this that read sent back every session they wrote (three
   * nodes enqueueing: reads of 2,000 sessions, 500 of them the reader's own).
   */
  private ownTicks: number[] = [];

  /** The tick up to which this node has applied every change. */
  seenTick(): number {
    return this.seen;
  }
  private reading = false;
  private again = false;
  private timer: unknown = null;
  private unlisten: (() => Promise<void>) | null = null;
  private stopped = false;
  /** The poll found the store closed: it never answers again (afterStoreFailure). */
  private pollHalted = false;
  listening = false;

  constructor(private readonly o: FeedOptions) {}

  /** Starts from `tick` (everything up to it is loaded), listens, and polls. */
  async start(tick: number): Promise<void> {
    this.seen = tick;
    if (this.o.notifications !== undefined) {
      try {
        this.unlisten = await this.o.notifications.listen(
          TICK_CHANNEL,
          (payload) => {
            // `<tick> <owner> grantable|full`; a repair's NOTIFY has no owner.
            const [tick, owner, flag] = payload.split(' ');
            if (owner === this.o.owner) return;
            // A tick that left nothing to grant needs no tick here (a node
            // of an older version sends no flag, and a repair none: ask).
            this.heard(Number(tick), flag !== 'full');
          },
          (state) => {
            this.listening = state === 'listening';
            // Back from a lost listener: what was said meanwhile is read now.
            if (this.listening) this.read();
          },
        );
        this.listening = true;
      } catch (error) {
        this.o.onError(error);
      }
    }
    this.arm();
  }

  /**
   * A tick of this node leaves: what it should say it has seen (`since`), so
   * its reply brings the rest. Counted as on its way until `own` or
   * `ownFailed` hears of it.
   */
  sending(): number {
    this.onTheWay += 1;
    return this.seen;
  }

  /**
   * The reply of a tick sent with `since` (what `sending` said) arrived: it
   * covers every tick up to its own, so the next tick says so. Called as
   * the reply lands, before the dispatcher sends the next tick (it sends
   * that one before it hands this reply on): otherwise each tick sent that
   * way said the one before was unseen, and its reply brought this node's
   * own changes back (a lone node's pipelined ticks carried ~9 sessions
   * each, read, sent and applied to the board again). Idempotent per
   * reply; `own` lands it if nobody did.
   */
  landed(result: TickResult): void {
    if (this.landedReplies.has(result)) return;
    this.landedReplies.add(result);
    this.onTheWay = Math.max(0, this.onTheWay - 1);
    // A tick that changed something is this node's own (else it answers the current number).
    if (result.changed && result.tick > this.seen) this.ownTicks.push(result.tick);
    // Too many changes to ride: the reply covers nothing of others'; the
    // ticks up to its own are read (`own`), and until then every tick says
    // the same `since` (its reply is deferred too, or brings them).
    if (result.changesDeferred === true) {
      if (result.tick > this.heardUpTo) this.heardUpTo = result.tick;
      return;
    }
    this.coveredAt = this.o.clock.now();
    if (result.tick > this.seen) this.advance(result.tick);
  }

  /** Every change up to `tick` is applied here. */
  private advance(tick: number): void {
    this.seen = tick;
    if (this.ownTicks.length > 0) this.ownTicks = this.ownTicks.filter((t) => t > tick);
  }

  /**
   * A tick this node made, applied from its reply. Sent with `since` (what
   * `sending` said), the reply covers every tick up to its own: what
   * others changed after `since` rode along (`changes`, handed on here). A
   * tick heard meanwhile that came after it is read now. Without `since`, a
   * tick right after the last one seen needs no read; a tick that changed
   * nothing answers the current number, which may be another node's: that
   * one is read.
   */
  own(result: TickResult, since?: number): void {
    if (since !== undefined) {
      this.landed(result);
      if (result.changes !== undefined && !this.stopped)
        this.o.onChanges({ sessions: result.changes, lines: [], tick: result.tick });
      if (this.heardUpTo > this.seen) this.read();
      return;
    }
    if (result.changed && result.tick === this.seen + 1) this.advance(result.tick);
    else if (result.tick > this.seen) this.read();
  }

  /** Reads what other nodes changed since the last tick seen (a watcher came: src/actors/runtimeWatch.ts). */
  catchUp(): void {
    this.read();
  }

  /** A tick of this node failed: what was left for its reply is read instead. */
  ownFailed(): void {
    this.onTheWay = Math.max(0, this.onTheWay - 1);
    if (this.heardUpTo > this.seen) this.read();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== null) this.o.clock.clearTimeout(this.timer);
    this.timer = null;
    void this.unlisten?.().catch(this.o.onError);
  }

  /**
   * A newer tick: the dispatcher is told when it may grant for it; its
   * changes come with this node's next reply when a tick is on its way,
   * else they are read.
   */
  private heard(tick: number, grantable = true): void {
    if (!Number.isSafeInteger(tick) || tick <= this.seen) return;
    if (tick > this.heardUpTo) this.heardUpTo = tick;
    if (grantable) this.o.onNewerTick(tick);
    // After the dispatcher's own microtask: a tick it sends for this one has left.
    queueMicrotask(() => {
      if (this.heardUpTo > this.seen && this.onTheWay === 0) this.read();
    });
  }

  private arm(delayMs = this.o.pollMs): void {
    if (this.stopped || this.pollHalted) return;
    this.timer = this.o.clock.setTimeout(() => {
      this.timer = null;
      // A reply within the period brought every tick up to its own: nothing to poll yet.
      const idleFor = this.o.clock.now() - this.coveredAt;
      if (idleFor < this.o.pollMs) {
        this.arm(this.o.pollMs - idleFor);
        return;
      }
      void this.o
        .track(this.o.currentTick())
        .then(
          (tick) => this.heard(tick),
          (error: unknown) => {
            this.o.onError(error);
            if (afterStoreFailure(error) === 'halt') this.pollHalted = true;
          },
        )
        .finally(() => this.arm());
    }, delayMs);
  }

  /** One read at a time; a tick heard meanwhile is read right after. */
  private read(): void {
    if (this.stopped) return;
    if (this.reading) {
      this.again = true;
      return;
    }
    this.reading = true;
    void this.o
      .track(this.o.readChanges(this.seen, this.ownTicks.slice(-MAX_SKIPPED_TICKS)))
      .then((changes) => {
        if (this.stopped) return;
        if (changes.tick > this.seen) this.advance(changes.tick);
        this.o.onChanges(changes);
      }, this.o.onError)
      .finally(() => {
        this.reading = false;
        if (this.again) {
          this.again = false;
          this.read();
        }
      });
  }
}
