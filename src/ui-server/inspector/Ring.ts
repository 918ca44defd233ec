/**
 * A bounded buffer with sequence numbers: the newest `capacity` items are
 * kept, older ones are overwritten. Readers keep the last seq they saw and
 * ask for what came after, so a reader that fell behind learns it (`lost`)
 * instead of the writer ever waiting or growing.
 */

/** What a reader gets: items after its cursor, and whether some were overwritten first. */
export interface RingRead<T> {
  items: T[];
  /** The seq of the last item returned (the reader's next cursor). */
  next: number;
  /** True when items after the cursor were overwritten before this read. */
  lost: boolean;
}

/**
 * @example
 * ```ts
 * const r = new Ring(2)
 * r.push('a'); r.push('b'); r.push('c')
 * r.toArray() // => ['b', 'c']
 * r.since(0) // => { items: ['b', 'c'], next: 3, lost: true }
 * r.since(2) // => { items: ['c'], next: 3, lost: false }
 * r.since(3) // => { items: [], next: 3, lost: false }
 * r.seq // => 3
 * new Ring(0) // throws RangeError
 * ```
 */
export class Ring<T> {
  private readonly items: (T | undefined)[];
  /** Total items ever pushed: the seq of the newest one. */
  seq = 0;

  constructor(readonly capacity: number) {
    if (!(Number.isInteger(capacity) && capacity > 0)) {
      throw new RangeError(`ring capacity must be a positive integer, got ${capacity}`);
    }
    this.items = new Array<T | undefined>(capacity);
  }

  push(item: T): number {
    this.items[this.seq % this.capacity] = item;
    this.seq += 1;
    return this.seq;
  }

  get size(): number {
    return Math.min(this.seq, this.capacity);
  }

  /** The items with seq greater than `cursor`, oldest first. */
  since(cursor: number): RingRead<T> {
    const oldest = this.seq - this.size; // seq of the item before the oldest kept
    const from = Math.max(cursor, oldest);
    const items: T[] = [];
    for (let s = from; s < this.seq; s += 1) items.push(this.items[s % this.capacity] as T);
    return { items, next: this.seq, lost: cursor < oldest };
  }

  toArray(): T[] {
    return this.since(0).items;
  }
}
