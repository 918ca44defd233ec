/**
 * A virtual clock for the harness: timers fire only when `advance` moves
 * time, in due order, and the harness settles the system between two
 * firings, so a timer set by one firing's consequences lands in the right
 * place. Satisfies the supervisor's, xstate's and the containers' Clock.
 */
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
    this.timers.set(this.seq, { due: this.t + Math.max(0, ms), fn });
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
