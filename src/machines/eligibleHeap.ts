/**
 * The users who may receive the next grant (queued work, under their cap),
 * ordered by the turn key of their head session. Users at their cap are not
 * in the heap at all, so a dispatch never walks past them: its cost depends on
 * the number of eligible users logarithmically, never on the queue length.
 *
 * An indexed binary min-heap: every item remembers its slot, so a user can be
 * removed (cap lowered, queue emptied) or re-keyed in O(log n).
 */

/** What the heap needs from an item: its current key and a slot it may write. */
export interface HeapItem {
  readonly headTag: number;
  readonly joinSeq: number;
  /** Index in the heap, or -1 when not in it. Owned by the heap. */
  heapIndex: number;
}

/**
 * @example
 * ```ts
 * const heap = new EligibleHeap();
 * const a = { headTag: 3, joinSeq: 0, heapIndex: -1 };
 * const b = { headTag: 1, joinSeq: 5, heapIndex: -1 };
 * heap.push(a);
 * heap.push(b);
 * heap.peek() === b // => true
 * heap.remove(b);
 * heap.peek() === a // => true
 * b.heapIndex // => -1
 * heap.size // => 1
 * ```
 */
export class EligibleHeap<T extends HeapItem = HeapItem> {
  private readonly items: T[] = [];

  get size(): number {
    return this.items.length;
  }

  /** The item with the smallest key, or undefined. */
  peek(): T | undefined {
    return this.items[0];
  }

  /** True when the item is in this heap. */
  has(item: T): boolean {
    return item.heapIndex >= 0 && this.items[item.heapIndex] === item;
  }

  push(item: T): void {
    if (this.has(item)) return;
    item.heapIndex = this.items.length;
    this.items.push(item);
    this.up(item.heapIndex);
  }

  remove(item: T): void {
    if (!this.has(item)) return;
    const i = item.heapIndex;
    const last = this.items.pop() as T;
    item.heapIndex = -1;
    if (last === item) return;
    this.items[i] = last;
    last.heapIndex = i;
    this.up(i);
    this.down(last.heapIndex);
  }

  /** Restores order after the item's key changed (either direction). */
  update(item: T): void {
    if (!this.has(item)) return;
    this.up(item.heapIndex);
    this.down(item.heapIndex);
  }

  clear(): void {
    for (const item of this.items) item.heapIndex = -1;
    this.items.length = 0;
  }

  private less(i: number, j: number): boolean {
    const a = this.items[i] as T;
    const b = this.items[j] as T;
    return a.headTag !== b.headTag ? a.headTag < b.headTag : a.joinSeq < b.joinSeq;
  }

  private swap(i: number, j: number): void {
    const a = this.items[i] as T;
    const b = this.items[j] as T;
    this.items[i] = b;
    this.items[j] = a;
    a.heapIndex = j;
    b.heapIndex = i;
  }

  private up(i: number): void {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(i, parent)) return;
      this.swap(i, parent);
      i = parent;
    }
  }

  private down(i: number): void {
    const n = this.items.length;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < n && this.less(l, m)) m = l;
      if (r < n && this.less(r, m)) m = r;
      if (m === i) return;
      this.swap(i, m);
      i = m;
    }
  }
}
