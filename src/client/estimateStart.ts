/**
 * When a queued card is likely to get a runner ("starts in ~4 min"), from
 * the recent durations of finished runs, the runs holding a runner now and
 * the caps. Pure: the page and the measurement script feed it numbers.
 *
 * The model: every run takes the mean recent duration (k runs ahead add up
 * to k means; with many instant runs among long ones the median is 0 or the
 * long one, and waits read as zero or double: bench/results/estimate.md); a
 * run already going has the mean of the recent durations longer than its age
 * still to go, and one that outlived all of them as long again as it has
 * run (at least a quarter of the mean). A run going now that is older than
 * every recent duration also counts as a duration (its age: a lower bound),
 * so a node that has only seen instant runs finish does not call every wait
 * zero while long ones are running. The line is served in
 * position order (the RunnerPool's fair order, which grants follow), each
 * card by the first runner to free up, and a card whose user is at their cap
 * waits for one of that user's runs to end as well. Cards ahead that the
 * viewer cannot see (other users') count as runs of nobody in particular.
 *
 * Imports nothing from `node:*`: the browser bundle includes this file.
 */

/** What the estimate is made from. Times in milliseconds. */
export interface StartEstimateInput {
  now: number;
  /** The global cap: runners held at once. */
  maxRunning: number;
  /** Caps of the users whose cards are known; absent or null: only the global cap. */
  userCaps: Readonly<Record<string, number | null>>;
  /**
   * Runs holding a runner that the viewer can see, with when they started
   * and, for a task with a time limit, when that limit stops them.
   */
  running: ReadonlyArray<{ userId: string; since: number; until?: number | null }>;
  /** Runs holding a runner that the viewer cannot see (the pool's count minus `running`). */
  runningUnseen: number;
  /**
   * The queued cards the viewer can see; positions are 1-based (0: being
   * started). `limitMs`: the task's time limit, the longest its run can take.
   */
  queued: ReadonlyArray<{
    taskId: string;
    userId: string;
    position: number;
    limitMs?: number | null;
  }>;
  /** Durations of recently finished runs. */
  recentDurations: readonly number[];
}

const mean = (values: readonly number[]): number =>
  values.reduce((a, b) => a + b, 0) / values.length;

/** A runner frees up at the earliest of these times: a small binary heap. */
class FreeTimes {
  private readonly heap: number[] = [];
  /** The time at `i`: only called with an index below the heap's length. */
  private at(i: number): number {
    return this.heap[i]!;
  }
  private swap(a: number, b: number): void {
    const t = this.at(a);
    this.heap[a] = this.at(b);
    this.heap[b] = t;
  }
  push(t: number): void {
    this.heap.push(t);
    let i = this.heap.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (this.at(p) <= this.at(i)) break;
      this.swap(p, i);
      i = p;
    }
  }
  /** The earliest time, taken out; the caller keeps one time per runner, so it is never empty. */
  pop(): number {
    const h = this.heap;
    const top = this.at(0);
    const last = h.pop();
    if (last !== undefined && h.length > 0) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && this.at(l) < this.at(m)) m = l;
        if (r < h.length && this.at(r) < this.at(m)) m = r;
        if (m === i) break;
        this.swap(m, i);
        i = m;
      }
    }
    return top;
  }
}

/**
 * Milliseconds from `now` until each visible queued card is expected to get
 * a runner, by task id; empty when there are no recent durations to go by
 * (or no runner at all). A card of a user capped at 0 gets none (it does
 * not start until the cap is raised).
 *
 * @example
 * ```ts
 * const base = { now: 0, maxRunning: 2, userCaps: {}, running: [], runningUnseen: 0, recentDurations: [60_000] }
 * const queued = [1, 2, 3, 4, 5].map((p) => ({ taskId: `t${p}`, userId: 'ann', position: p }))
 * estimateStarts({ ...base, queued }) // => { t1: 0, t2: 0, t3: 60000, t4: 60000, t5: 120000 }
 * estimateStarts({ ...base, queued, running: [{ userId: 'bob', since: -45_000 }], runningUnseen: 1 }).t1 // => 15000
 * estimateStarts({ ...base, queued, userCaps: { ann: 1 } }) // => { t1: 0, t2: 60000, t3: 120000, t4: 180000, t5: 240000 }
 * estimateStarts({ ...base, queued: [{ taskId: 'late', userId: 'ann', position: 6 }] }).late // => 120000
 * estimateStarts({ ...base, queued, userCaps: { ann: 0 } }) // => {}
 * estimateStarts({ ...base, queued, recentDurations: [] }) // => {}
 * // Three instant runs and two of a minute: each run ahead adds the mean, 24 s.
 * estimateStarts({ ...base, maxRunning: 1, queued: queued.slice(0, 3), recentDurations: [0, 0, 0, 60_000, 60_000] }) // => { t1: 0, t2: 24000, t3: 48000 }
 * // Only instant runs seen so far, one going for 20 s: it is expected to go on as long again.
 * estimateStarts({ ...base, maxRunning: 1, queued: queued.slice(0, 1), running: [{ userId: 'bob', since: -20_000 }], recentDurations: [0, 0] }) // => { t1: 20000 }
 * // A time limit bounds a run: one going stops by its until, one waiting takes at most its limit.
 * estimateStarts({ ...base, maxRunning: 1, queued: queued.slice(0, 1), running: [{ userId: 'bob', since: -45_000, until: 5_000 }] }) // => { t1: 5000 }
 * estimateStarts({ ...base, maxRunning: 1, queued: [{ taskId: 'a', userId: 'ann', position: 1, limitMs: 10_000 }, { taskId: 'b', userId: 'bob', position: 2 }] }) // => { a: 0, b: 10000 }
 * ```
 */
export function estimateStarts(input: StartEstimateInput): Record<string, number> {
  const { now, maxRunning } = input;
  if (input.recentDurations.length === 0 || maxRunning < 1) return {};
  const longest = Math.max(...input.recentDurations);
  const outlived = input.running.map((r) => now - r.since).filter((age) => age > longest);
  const durations = [...input.recentDurations, ...outlived];
  const typical = mean(durations);
  const remaining = (age: number) => {
    const longer = durations.filter((d) => d > age);
    return longer.length > 0 ? mean(longer) - age : Math.max(typical / 4, age);
  };
  const free = new FreeTimes();
  const ends = new Map<string, number[]>();
  let held = 0;
  for (const r of input.running) {
    if (held === maxRunning) break;
    const expected = now + remaining(Math.max(0, now - r.since));
    // Past its limit and not yet stopped (the runner is reading its output): any moment.
    const end = r.until == null ? expected : Math.max(now, Math.min(expected, r.until));
    free.push(end);
    ends.set(r.userId, [...(ends.get(r.userId) ?? []), end]);
    held += 1;
  }
  for (let i = 0; i < input.runningUnseen && held < maxRunning; i += 1, held += 1) {
    free.push(now + typical / 2);
  }
  for (; held < maxRunning; held += 1) free.push(now);

  const out: Record<string, number> = {};
  const known = [...input.queued].sort((a, b) => a.position - b.position);
  let position = 1;
  for (const card of known) {
    if (card.position < 1) {
      out[card.taskId] = 0;
      continue;
    }
    // Cards ahead that the viewer cannot see each take the next runner.
    for (; position < card.position; position += 1) free.push(free.pop() + typical);
    const cap = input.userCaps[card.userId];
    // A user capped at 0 runs nothing: no estimate, and no runner taken.
    if (cap === 0) {
      position = card.position + 1;
      continue;
    }
    let start = free.pop();
    const mine = (ends.get(card.userId) ?? []).sort((a, b) => a - b);
    if (cap != null && mine.length >= cap) start = Math.max(start, mine[mine.length - cap]!);
    const end = start + (card.limitMs == null ? typical : Math.min(typical, card.limitMs));
    free.push(end);
    ends.set(card.userId, [...mine, end]);
    out[card.taskId] = Math.max(0, start - now);
    position = card.position + 1;
  }
  return out;
}

/**
 * The card's words for an estimate.
 *
 * @example
 * ```ts
 * formatStartsIn(0) // => 'starts any moment'
 * formatStartsIn(40_000) // => 'starts in < 1 min'
 * formatStartsIn(4 * 60_000 + 20_000) // => 'starts in ~4 min'
 * formatStartsIn(150 * 60_000) // => 'starts in ~2.5 h'
 * ```
 */
export function formatStartsIn(ms: number): string {
  if (ms < 5_000) return 'starts any moment';
  if (ms < 60_000) return 'starts in < 1 min';
  if (ms < 90 * 60_000) return `starts in ~${Math.round(ms / 60_000)} min`;
  return `starts in ~${Math.round(ms / 360_000) / 10} h`;
}
