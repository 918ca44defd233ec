/**
 * A virtual clock for the harness: timers fire only when `advance` moves
 * time, in due order, and the harness settles the system between two
 * firings, so a timer set by one firing's consequences lands in the right
 * place. Satisfies the supervisor's, xstate's and the containers' Clock.
 *
 * It stands for Node's timers, so it waits as they do: a delay longer than
 * a timer holds (above 2^31 - 1 ms, ~24.8 days) fires after 1 ms, with the
 * same TimeoutOverflowWarning, and one that is not a number fires after
 * 1 ms too. A test of code that sets such a timer sees what production
 * would, rather than a clock that faithfully waited the days.
 */
import { MAX_TIMER_MS } from '../common/maxTimerMs.js';

export class TestClock {
  private t: number;
  private seq = 0;
  private readonly timers = new Map<number, { due: number; fn: () => void }>();

  constructor(startMs = Date.parse('2026-07-14T10:00:00Z')) {
    this.t = startMs;
  }

  now(): number {
    return this.t;
  }

  setTimeout(fn: () => void, ms: number): number {
    this.seq += 1;
    this.timers.set(this.seq, { due: this.t + nodeDelay(ms), fn });
    return this.seq;
  }

  clearTimeout(id: unknown): void {
    this.timers.delete(id as number);
  }

  /** The next timer due at or before `limit`, if any (ties: the earliest set). */
  nextDue(limit: number): number | null {
    let best: number | null = null;
    for (const t of this.timers.values())
      if (t.due <= limit && (best === null || t.due < best)) best = t.due;
    return best;
  }

  /** Moves time to `at` (never backwards) and fires the timers due by then, one at a time. */
  fireNext(at: number): boolean {
    this.t = Math.max(this.t, at);
    let id: number | null = null;
    let due = Number.POSITIVE_INFINITY;
    for (const [k, v] of this.timers) {
      if (v.due <= this.t && v.due < due) {
        due = v.due;
        id = k;
      }
    }
    if (id === null) return false;
    const timer = this.timers.get(id);
    this.timers.delete(id);
    timer?.fn();
    return true;
  }

  pending(): number {
    return this.timers.size;
  }
}

/**
 * The delay a Node timer of `ms` really waits (as lib/internal/timers.js
 * decides it; below 1 ms the virtual clock keeps 0 so that a zero timer
 * fires at the time it was set).
 *
 * @example
 * ```ts
 * nodeDelay(250) // => 250
 * nodeDelay(-5) // => 0
 * nodeDelay(Number.NaN) // => 1
 * ```
 */
export function nodeDelay(ms: number): number {
  if (Number.isNaN(ms)) return 1;
  if (ms > MAX_TIMER_MS) {
    process.emitWarning(
      `${ms} does not fit into a 32-bit signed integer.\nTimeout duration was set to 1.`,
      'TimeoutOverflowWarning',
    );
    return 1;
  }
  return Math.max(0, ms);
}
