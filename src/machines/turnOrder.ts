/**
 * The pool's priority order over queued sessions, as an order-statistic set
 * of turn keys: `rank(key)` answers "how many queued sessions are ahead of
 * this one" in O(log n), which is what makes a position cheap for one session.
 *
 * A key is `(tag, joinSeq)`: the turn in which a session is served, then the
 * order in which its user joined the line (see docs/runner-pool.md). Keys are
 * unique: one user never holds two keys with the same tag.
 *
 * A treap with subtree sizes. Priorities come from a fixed-seed generator so
 * the structure, like every decision in the pool, is deterministic.
 */

/** A turn key: a session is served in turn `tag`; ties go to the earlier `joinSeq`. */
export interface TurnKey {
  readonly tag: number;
  readonly joinSeq: number;
}

/**
 * Compares two turn keys: negative when `a` is served first.
 *
 * @example
 * ```ts
 * compareTurn({ tag: 1, joinSeq: 9 }, { tag: 2, joinSeq: 0 }) < 0 // => true
 * compareTurn({ tag: 2, joinSeq: 3 }, { tag: 2, joinSeq: 4 }) < 0 // => true
 * compareTurn({ tag: 2, joinSeq: 4 }, { tag: 2, joinSeq: 4 }) // => 0
 * ```
 */
export function compareTurn(a: TurnKey, b: TurnKey): number {
  return a.tag !== b.tag ? a.tag - b.tag : a.joinSeq - b.joinSeq;
}

const NIL = 0;

/**
 * An order-statistic set of turn keys.
 *
 * @example
 * ```ts
 * const order = new TurnOrder();
 * order.insert({ tag: 0, joinSeq: 1 });
 * order.insert({ tag: 0, joinSeq: 0 });
 * order.insert({ tag: 1, joinSeq: 0 }) // => 2
 * order.rank({ tag: 1, joinSeq: 0 }) // => 2
 * order.min() // => { tag: 0, joinSeq: 0 }
 * order.delete({ tag: 0, joinSeq: 0 }) // => true
 * order.delete({ tag: 0, joinSeq: 0 }) // => false
 * order.rank({ tag: 1, joinSeq: 0 }) // => 1
 * order.size // => 2
 * ```
 */
export class TurnOrder {
  // Nodes live in parallel typed arrays (index 0 is the empty tree): no
  // object per key, no garbage per operation, and neighbours in memory.
  private tag = new Float64Array(1024);
  private join = new Float64Array(1024);
  private pri = new Uint32Array(1024);
  private sz = new Int32Array(1024);
  private left = new Int32Array(1024);
  private right = new Int32Array(1024);
  private root = NIL;
  private used = 1;
  private free: number[] = [];
  private path = new Int32Array(128);
  private seed = 0x2545f491;

  /** Number of keys in the set. */
  get size(): number {
    return this.sz[this.root] as number;
  }

  /**
   * Adds a key and answers how many keys are before it. The key must not be
   * present (the pool never inserts one twice; checking would cost a descent).
   */
  insert(key: TurnKey): number {
    const node = this.alloc(key);
    this.insertRank = 0;
    this.root = this.insertAt(this.root, node);
    return this.insertRank;
  }

  /** Removes a key; returns false when it was absent. */
  delete(key: TurnKey): boolean {
    let depth = 0;
    let parent = NIL;
    let n = this.root;
    while (n !== NIL) {
      const c = this.cmp(key.tag, key.joinSeq, n);
      if (c === 0) break;
      if (depth === this.path.length) this.path = grow(this.path, depth * 2);
      this.path[depth++] = n;
      parent = n;
      n = c < 0 ? (this.left[n] as number) : (this.right[n] as number);
    }
    if (n === NIL) return false;
    for (let i = 0; i < depth; i++) {
      const p = this.path[i] as number;
      this.sz[p] = (this.sz[p] as number) - 1;
    }
    const replacement = this.merge(this.left[n] as number, this.right[n] as number);
    if (parent === NIL) this.root = replacement;
    else if (this.left[parent] === n) this.left[parent] = replacement;
    else this.right[parent] = replacement;
    this.free.push(n);
    return true;
  }

  /** True when the key is in the set. */
  has(key: TurnKey): boolean {
    let n = this.root;
    while (n !== NIL) {
      const c = this.cmp(key.tag, key.joinSeq, n);
      if (c === 0) return true;
      n = c < 0 ? (this.left[n] as number) : (this.right[n] as number);
    }
    return false;
  }

  /** Number of keys strictly before `key`. */
  rank(key: TurnKey): number {
    let n = this.root;
    let before = 0;
    while (n !== NIL) {
      if (this.cmp(key.tag, key.joinSeq, n) <= 0) n = this.left[n] as number;
      else {
        before += (this.sz[this.left[n] as number] as number) + 1;
        n = this.right[n] as number;
      }
    }
    return before;
  }

  /** The first key, or `null` when empty. */
  min(): TurnKey | null {
    let n = this.root;
    if (n === NIL) return null;
    while (this.left[n] !== NIL) n = this.left[n] as number;
    return { tag: this.tag[n] as number, joinSeq: this.join[n] as number };
  }

  /** Removes every key. */
  clear(): void {
    this.root = NIL;
    this.used = 1;
    this.free = [];
  }

  private insertRank = 0;

  private cmp(tag: number, joinSeq: number, n: number): number {
    const t = this.tag[n] as number;
    return tag !== t ? tag - t : joinSeq - (this.join[n] as number);
  }

  private alloc(key: TurnKey): number {
    let n = this.free.pop();
    if (n === undefined) {
      if (this.used === this.tag.length) this.growAll(this.used * 2);
      n = this.used++;
    }
    this.tag[n] = key.tag;
    this.join[n] = key.joinSeq;
    this.pri[n] = this.nextPriority();
    this.sz[n] = 1;
    this.left[n] = NIL;
    this.right[n] = NIL;
    return n;
  }

  private growAll(capacity: number): void {
    this.tag = grow(this.tag, capacity);
    this.join = grow(this.join, capacity);
    this.pri = grow(this.pri, capacity);
    this.sz = grow(this.sz, capacity);
    this.left = grow(this.left, capacity);
    this.right = grow(this.right, capacity);
  }

  private nextPriority(): number {
    // xorshift32: deterministic, cheap, good enough to balance a treap.
    let x = this.seed;
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    this.seed = x >>> 0;
    return this.seed;
  }

  /** Descends to a leaf and rotates up; counts the keys passed on the left. */
  private insertAt(n: number, node: number): number {
    if (n === NIL) return node;
    this.sz[n] = (this.sz[n] as number) + 1;
    if (this.cmp(this.tag[node] as number, this.join[node] as number, n) < 0) {
      const l = this.insertAt(this.left[n] as number, node);
      this.left[n] = l;
      if ((this.pri[l] as number) > (this.pri[n] as number)) return this.rotateRight(n);
    } else {
      this.insertRank += (this.sz[this.left[n] as number] as number) + 1;
      const r = this.insertAt(this.right[n] as number, node);
      this.right[n] = r;
      if ((this.pri[r] as number) > (this.pri[n] as number)) return this.rotateLeft(n);
    }
    return n;
  }

  private fix(n: number): void {
    this.sz[n] =
      (this.sz[this.left[n] as number] as number) +
      (this.sz[this.right[n] as number] as number) +
      1;
  }

  private rotateRight(n: number): number {
    const l = this.left[n] as number;
    this.left[n] = this.right[l] as number;
    this.right[l] = n;
    this.fix(n);
    this.fix(l);
    return l;
  }

  private rotateLeft(n: number): number {
    const r = this.right[n] as number;
    this.right[n] = this.left[r] as number;
    this.left[r] = n;
    this.fix(n);
    this.fix(r);
    return r;
  }

  private merge(a: number, b: number): number {
    if (a === NIL) return b;
    if (b === NIL) return a;
    if ((this.pri[a] as number) > (this.pri[b] as number)) {
      this.right[a] = this.merge(this.right[a] as number, b);
      this.fix(a);
      return a;
    }
    this.left[b] = this.merge(a, this.left[b] as number);
    this.fix(b);
    return b;
  }
}

function grow<T extends Float64Array | Uint32Array | Int32Array>(array: T, capacity: number): T {
  const next = new (array.constructor as new (n: number) => T)(capacity);
  next.set(array);
  return next;
}
