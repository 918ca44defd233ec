/**
 * The board's recent history, for the admin dashboard and the start
 * estimates: it watches the cards go by (the same stream the hub fans out)
 * and keeps the last hour as points every `SAMPLE_MS`: queue depth, runners
 * held, wait p50/p95 over the last five minutes, failures since the previous
 * point; and the durations of the last `DURATIONS_KEPT` finished runs.
 * No I/O: the server feeds it cards, pool snapshots and the time.
 */
import type { BoardCard, PoolSnapshot } from '../board/boardPort.js';
import type { BoardStatsSnapshot, StatsPoint } from '../board/boardStats.js';

/** How often the server takes a point. */
export const SAMPLE_MS = 10_000;
/** How much history is kept. */
export const HISTORY_MS = 60 * 60_000;
/** The window the wait percentiles of a point are taken over. */
export const WAIT_WINDOW_MS = 5 * 60_000;
/** How many recent run durations are kept. */
export const DURATIONS_KEPT = 50;
/** How many finished sessions are remembered, so a card sent again is not counted twice. */
const FINISHED_REMEMBERED = 10_000;

interface Seen {
  sessionId: string;
  queuedSince: number | null;
  runningSince: number | null;
  failed: boolean;
}

/**
 * The nearest-rank percentile `p` (0..1) of `values`; null for none.
 *
 * @example
 * ```ts
 * percentile([5, 1, 3, 2, 4], 0.5) // => 3
 * percentile([5, 1, 3, 2, 4], 0.95) // => 5
 * percentile([], 0.5) // => null
 * ```
 */
export function percentile(values: readonly number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  // In range: the index is clamped to [0, length - 1] and the list is not empty.
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!;
}

/** The recorder. */
export class BoardStats {
  private readonly seen = new Map<string, Seen>();
  /** Sessions already counted as finished (a finished card can be sent again): the latest ones. */
  private readonly finished = new Set<string>();
  /** The last runs counted, oldest first, by session: each counted once however it came. */
  private readonly runs: Array<{ sessionId: string; ms: number }> = [];
  private readonly waits: Array<{ at: number; seconds: number }> = [];
  private readonly points: StatsPoint[] = [];
  private failuresSincePoint = 0;

  /** A card's new state, in commit order. */
  observe(card: BoardCard, now: number): void {
    if (this.finished.has(card.sessionId)) return;
    let s = this.seen.get(card.taskId);
    if (s === undefined || s.sessionId !== card.sessionId) {
      s = { sessionId: card.sessionId, queuedSince: null, runningSince: null, failed: false };
      this.seen.set(card.taskId, s);
    }
    if (card.queued !== null) s.queuedSince = Date.parse(card.queued.since);
    if (card.running !== null && s.runningSince === null) {
      s.runningSince = Date.parse(card.running.since);
      if (s.queuedSince !== null) {
        this.waits.push({ at: now, seconds: Math.max(0, s.runningSince - s.queuedSince) / 1000 });
      }
    }
    if (card.status === 'failed' && !s.failed) {
      s.failed = true;
      this.failuresSincePoint += 1;
    }
    const finished = card.column === 'done' || card.column === 'failed';
    if (finished) {
      if (s.runningSince !== null && card.status !== 'cancelled' && !this.counted(card.sessionId)) {
        this.runs.push({
          sessionId: card.sessionId,
          ms: Math.max(0, Date.parse(card.updatedAt) - s.runningSince),
        });
        if (this.runs.length > DURATIONS_KEPT) this.runs.shift();
      }
      this.seen.delete(card.taskId);
      this.remember(card.sessionId);
    }
  }

  /**
   * Runs that ended before this server watched (read from the rows, oldest
   * first): kept ahead of the ones it saw end, each counted once whichever
   * way it came.
   *
   * @example
   * ```ts
   * const s = new BoardStats();
   * s.seed([{ sessionId: 'ses_a', ms: 1000 }, { sessionId: 'ses_b', ms: 2000 }]);
   * s.snapshot('ann').recentDurationsMs // => [1000, 2000]
   * s.seed([{ sessionId: 'ses_b', ms: 2000 }]);
   * s.snapshot('ann').recentDurationsMs // => [1000, 2000]
   * ```
   */
  seed(runs: ReadonlyArray<{ sessionId: string; ms: number }>): void {
    const unseen = runs
      .filter((r) => !this.counted(r.sessionId))
      .map(({ sessionId, ms }) => ({ sessionId, ms }));
    this.runs.unshift(...unseen);
    if (this.runs.length > DURATIONS_KEPT) this.runs.splice(0, this.runs.length - DURATIONS_KEPT);
  }

  private counted(sessionId: string): boolean {
    return this.runs.some((r) => r.sessionId === sessionId);
  }

  private remember(sessionId: string): void {
    this.finished.add(sessionId);
    if (this.finished.size > FINISHED_REMEMBERED) {
      // The oldest (a Set keeps insertion order); the set is not empty here.
      this.finished.delete(this.finished.values().next().value!);
    }
  }

  /** Takes a point now. */
  sample(now: number, pool: Pick<PoolSnapshot, 'queued' | 'running'>): void {
    while ((this.waits[0]?.at ?? now) < now - WAIT_WINDOW_MS) this.waits.shift();
    const waits = this.waits.map((w) => w.seconds);
    this.points.push({
      at: now,
      queued: pool.queued,
      running: pool.running,
      waitP50: percentile(waits, 0.5),
      waitP95: percentile(waits, 0.95),
      failures: this.failuresSincePoint,
    });
    this.failuresSincePoint = 0;
    while ((this.points[0]?.at ?? now) < now - HISTORY_MS) this.points.shift();
  }

  /** What `viewer` may see (`null`: the admin). */
  snapshot(viewer: string | null): BoardStatsSnapshot {
    return {
      recentDurationsMs: this.runs.map((r) => r.ms),
      series: viewer === null ? [...this.points] : [],
    };
  }
}
