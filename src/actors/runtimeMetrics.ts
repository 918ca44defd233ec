/**
 * What `/metrics` exports of a node, beside the line book's counts: the
 * waits from enqueue to grant, supervisor restarts, and runs given up
 * (re-queued or failed) by reason. Totals are monotonic since the runtime
 * started; each wait sample is handed out once (the server feeds them to a
 * cumulative histogram).
 */
import type { RuntimeMetricsSnapshot, RuntimePoolSnapshot } from './runtimeTypes.js';

export class RuntimeMetrics {
  private waits: number[] = [];
  private restarts = 0;
  private readonly giveUps: Record<string, number> = {};

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
    this.waits.push(Math.max(0, now - enqueuedAt.getTime()) / 1000);
  }

  /** A supervisor of the tree restarts a child. */
  restarted(): void {
    this.restarts += 1;
  }

  /** A run was given up (re-queued or failed) for `reason`. */
  gaveUp(reason: string): void {
    this.giveUps[reason] = (this.giveUps[reason] ?? 0) + 1;
  }

  /** The export for the pool as it is now; takes the wait samples recorded since the last call. */
  snapshot(pool: RuntimePoolSnapshot): RuntimeMetricsSnapshot {
    const samples = this.waits;
    this.waits = [];
    return {
      queueDepth: pool.users.map((u) => ({ userId: u.userId, queued: u.queued })),
      running: pool.users.map((u) => ({ userId: u.userId, running: u.running })),
      waitSamplesSeconds: samples,
      restartsTotal: this.restarts,
      giveUpsTotal: { ...this.giveUps },
    };
  }
}
