/**
 * The dispatcher's outbox: the ops waiting for a tick, in two lanes. The
 * runs' ops (handles, finishes, cancels of running sessions: `runOp`) go
 * first, each lane in its own arrival order.
 *
 * Why two lanes: a burst of submissions (thousands of enqueues) leaves in
 * ticks of `maxOps`. In one line, in arrival order, the finishes of the
 * runs under way waited behind all of it: their slots stayed held and the
 * node granted nothing until the burst was in (the peers bench: 5,000
 * enqueues, ten ticks of ~80 ms each while the first 20 runs were long
 * over). A run's op depends on no op still waiting (its session was
 * granted, so its enqueue committed), and what it overtakes is about
 * other sessions, queued ones: a cancel of a queued session stays in the
 * queue lane, behind the enqueue it may name.
 *
 * An op split off a failed tick (`solo`) goes alone, before anything else.
 */
import { type Entry, MAX_TICK_BYTES, runOp, weight } from './dispatcherBatch.js';
import { splitLate } from './dispatcherFailure.js';

export class Outbox {
  private runs: Entry[] = [];
  private queue: Entry[] = [];

  /** Ops waiting. */
  get size(): number {
    return this.runs.length + this.queue.length;
  }

  /** Whether the next tick is a solo op's. */
  soloNext(): boolean {
    return this.runs[0]?.solo === true || this.queue[0]?.solo === true;
  }

  /** A new op, behind the others of its lane. */
  push(e: Entry): void {
    (runOp(e.op) ? this.runs : this.queue).push(e);
  }

  /** Ops of a failed tick, back at the head of their lanes in their order. */
  unshift(entries: readonly Entry[]): void {
    this.runs.unshift(...entries.filter((e) => runOp(e.op)));
    this.queue.unshift(...entries.filter((e) => !runOp(e.op)));
  }

  /**
   * The next tick's batch, removed from the outbox: a solo op alone, else
   * up to `maxOps` ops and `MAX_TICK_BYTES` of JSON (at least one), the
   * runs' lane first, each lane up to its first solo op.
   *
   * @example
   * ```ts
   * const e = (op: string) => ({ op: { op, output: null, expected: { status: 'queued' } }, at: 0, solo: false });
   * const box = new Outbox();
   * for (const op of ['enqueue', 'enqueue', 'finish', 'enqueue', 'handle']) box.push(e(op) as never);
   * box.take(3).map((x) => x.op.op) // => ['finish', 'handle', 'enqueue']
   * box.take(3).map((x) => x.op.op) // => ['enqueue', 'enqueue']
   * ```
   */
  take(maxOps: number): Entry[] {
    const solo = this.runs[0]?.solo ? this.runs : this.queue[0]?.solo ? this.queue : null;
    if (solo !== null) return solo.splice(0, 1);
    const batch: Entry[] = [];
    let bytes = 0;
    let full = false;
    for (const lane of [this.runs, this.queue]) {
      let n = 0;
      for (; n < lane.length; n++) {
        const e = lane[n] as Entry;
        if (e.solo) break;
        const w = weight(e.op);
        if (batch.length >= maxOps || (batch.length > 0 && bytes + w > MAX_TICK_BYTES)) {
          full = true;
          break;
        }
        bytes += w;
        batch.push(e);
      }
      lane.splice(0, n);
      if (full) break;
    }
    return batch;
  }

  /** Every op, removed (the dispatcher stopped). */
  drain(): Entry[] {
    const all = [...this.runs, ...this.queue];
    this.runs = [];
    this.queue = [];
    return all;
  }

  /**
   * Removes and returns the ops `given` says yes to, each lane keeping the
   * order of the rest.
   *
   * @example
   * ```ts
   * const e = (op: string, command: boolean) => ({ op: { op, output: null }, at: 0, solo: false, command });
   * const box = new Outbox();
   * for (const [op, c] of [['enqueue', true], ['finish', false], ['cap', true]] as const) box.push(e(op, c) as never);
   * box.withdraw((x) => x.command === true).map((x) => x.op.op) // => ['enqueue', 'cap']
   * box.size // => 1
   * ```
   */
  withdraw(given: (e: Entry) => boolean): Entry[] {
    const out = [...this.runs.filter(given), ...this.queue.filter(given)];
    if (out.length === 0) return out;
    this.runs = this.runs.filter((e) => !given(e));
    this.queue = this.queue.filter((e) => !given(e));
    return out;
  }

  /** Removes and returns the ops that arrived at or before `limit` (their deadline passed). */
  expire(limit: number): Entry[] {
    const runs = splitLate(this.runs, limit);
    const queue = splitLate(this.queue, limit);
    this.runs = runs.keep;
    this.queue = queue.keep;
    return [...runs.late, ...queue.late];
  }
}
