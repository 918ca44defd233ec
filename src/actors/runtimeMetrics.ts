/**
 * What `/metrics` exports of a node, beside the line book's counts: the
 * waits from enqueue to grant, the dispatch ticks it sent (round trip, ops,
 * failures) and its grants, supervisor restarts, runs given up (re-queued
 * or failed) by reason, and the other boots its liveness watch found gone.
 * Totals are monotonic since the runtime started; each sample is handed out
 * once (the server feeds them to cumulative histograms). Samples wait for
 * the next scrape in a bounded buffer: a node nobody scrapes keeps the
 * newest `MAX_PENDING_SAMPLES` of each series and counts the rest dropped.
 */
import type { RuntimeMetricsSnapshot, RuntimePoolSnapshot } from './runtimeTypes.js';

/** The most samples of one series kept between two scrapes (~0.8 MB of numbers). */
export const MAX_PENDING_SAMPLES = 100_000;

/**
 * Samples waiting for the next scrape: at most `max`, the oldest dropped
 * and counted when more arrive.
 *
 * @example
 * ```ts
 * const p = new PendingSamples(2);
 * p.push(1); p.push(2); p.push(3);
 * p.dropped // => 1
 * p.take() // => [2, 3]
 * p.take() // => []
 * ```
 */
export class PendingSamples<T> {
  private items: T[] = [];
  private head = 0;
  /** Samples dropped since the start. */
  dropped = 0;

  constructor(private readonly max: number = MAX_PENDING_SAMPLES) {}

  push(item: T): void {
    this.items.push(item);
    if (this.items.length - this.head > this.max) {
      this.head += 1;
      this.dropped += 1;
      // Compact once the dropped prefix is as long as what is kept.
      if (this.head >= this.max) {
        this.items = this.items.slice(this.head);
        this.head = 0;
      }
    }
  }

  /** Every sample since the last take, oldest first. */
  take(): T[] {
    const out = this.head === 0 ? this.items : this.items.slice(this.head);
    this.items = [];
    this.head = 0;
    return out;
  }
}

/** One dispatch tick as its sender saw it. */
export interface TickSample {
  /** Round trip, from send to reply (or failure), in ms on the runtime's clock. */
  ms: number;
  /** Ops it carried. */
  ops: number;
  /** It committed (false: it failed and its ops go again). */
  ok: boolean;
}

/**
 * The metric label of a give-up's reason: its code, the leading word
 * (`container_replaced`, `owner_lost`, `start_failed`, `engine_unavailable`,
 * `timed_out`...), never the text after it, which may carry the engine's
 * words and name the run: one series per failing session otherwise, and a
 * key kept for ever. A reason with no such word counts as `other`.
 *
 * @example
 * ```ts
 * giveUpReasonCode('container_replaced') // => 'container_replaced'
 * giveUpReasonCode('start_failed: create service rt-ses_1: 500 busy') // => 'start_failed'
 * giveUpReasonCode('engine_unavailable after 8 attempts: refused') // => 'engine_unavailable'
 * giveUpReasonCode('owner_lost: its run never began') // => 'owner_lost'
 * giveUpReasonCode('Something else') // => 'other'
 * ```
 */
export function giveUpReasonCode(reason: string): string {
  return /^[a-z][a-z0-9_]{0,63}(?=$|[\s:])/.exec(reason)?.[0] ?? 'other';
}

export class RuntimeMetrics {
  private readonly waits = new PendingSamples<number>();
  private readonly ticks = new PendingSamples<{ seconds: number; ops: number }>();
  private restarts = 0;
  private readonly giveUps: Record<string, number> = {};
  private ticksOk = 0;
  private ticksFailed = 0;
  private grants = 0;
  private readonly downs: Record<string, number> = {};
  private readonly submissions: Record<string, number> = {};

  /**
   * A session enqueued at `enqueuedAt` was granted at `now` (ms). A clock
   * behind the row's counts as no wait.
   *
   * @example
   * ```ts
   * const m = new RuntimeMetrics();
   * m.granted(new Date(1_000), 3_500);
   * m.granted(new Date(9_000), 3_500);
   * m.snapshot({ maxRunning: 1, running: 0, queued: 0, users: [] }).waitSamplesSeconds // => [2.5, 0]
   * m.snapshot({ maxRunning: 1, running: 0, queued: 0, users: [] }).waitSamplesSeconds // => []
   * ```
   */
  granted(enqueuedAt: Date, now: number): void {
    this.grants += 1;
    this.waits.push(Math.max(0, now - enqueuedAt.getTime()) / 1000);
  }

  /**
   * A tick this node sent came back (or failed).
   *
   * @example
   * ```ts
   * const m = new RuntimeMetrics();
   * m.ticked({ ms: 4, ops: 20, ok: true });
   * m.ticked({ ms: 30, ops: 3, ok: false });
   * const s = m.snapshot({ maxRunning: 1, running: 0, queued: 0, users: [] });
   * s.tickSamples // => [{ seconds: 0.004, ops: 20 }, { seconds: 0.03, ops: 3 }]
   * s.ticksTotal // => { ok: 1, failed: 1 }
   * ```
   */
  ticked(t: TickSample): void {
    if (t.ok) this.ticksOk += 1;
    else this.ticksFailed += 1;
    this.ticks.push({ seconds: Math.max(0, t.ms) / 1000, ops: t.ops });
  }

  /** This node's liveness watch found another boot gone, for `reason`. */
  ownerDown(reason: string): void {
    this.downs[reason] = (this.downs[reason] ?? 0) + 1;
  }

  /**
   * A submission through this node was answered: a task queued, a key's
   * task replayed, or a key in use with another request (a conflict).
   *
   * @example
   * ```ts
   * const m = new RuntimeMetrics();
   * m.submitted('queued');
   * m.submitted('replayed');
   * m.submitted('queued');
   * m.snapshot({ maxRunning: 1, running: 0, queued: 0, users: [] }).submissionsTotal // => { queued: 2, replayed: 1 }
   * ```
   */
  submitted(outcome: 'queued' | 'replayed' | 'conflict'): void {
    this.submissions[outcome] = (this.submissions[outcome] ?? 0) + 1;
  }

  /** A supervisor of the tree restarts a child. */
  restarted(): void {
    this.restarts += 1;
  }

  /** A run was given up (re-queued or failed) for `reason`, counted by its code (`giveUpReasonCode`). */
  gaveUp(reason: string): void {
    const code = giveUpReasonCode(reason);
    this.giveUps[code] = (this.giveUps[code] ?? 0) + 1;
  }

  /** The export for the pool as it is now; takes the wait samples recorded since the last call. */
  snapshot(pool: RuntimePoolSnapshot): RuntimeMetricsSnapshot {
    return {
      queueDepth: pool.users.map((u) => ({ userId: u.userId, queued: u.queued })),
      running: pool.users.map((u) => ({ userId: u.userId, running: u.running })),
      waitSamplesSeconds: this.waits.take(),
      restartsTotal: this.restarts,
      giveUpsTotal: { ...this.giveUps },
      tickSamples: this.ticks.take(),
      ticksTotal: { ok: this.ticksOk, failed: this.ticksFailed },
      grantsTotal: this.grants,
      ownerDownsTotal: { ...this.downs },
      submissionsTotal: { ...this.submissions },
      samplesDroppedTotal: { wait: this.waits.dropped, tick: this.ticks.dropped },
    };
  }
}
