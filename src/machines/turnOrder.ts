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

interface Node {
  tag: number;
  joinSeq: number;
  priority: number;
  size: number;
  left: Node | null;
  right: Node | null;
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

const size = (n: Node | null): number => (n === null ? 0 : n.size);

/**
 * An order-statistic set of turn keys.
 *
 * @example
 * ```ts
 * const order = new TurnOrder();
 * order.insert({ tag: 0, joinSeq: 1 });
 * order.insert({ tag: 0, joinSeq: 0 });
 * order.insert({ tag: 1, joinSeq: 0 });
 * order.rank({ tag: 1, joinSeq: 0 }) // => 2
 * order.min() // => { tag: 0, joinSeq: 0 }
 * order.delete({ tag: 0, joinSeq: 0 }) // => true
 * order.rank({ tag: 1, joinSeq: 0 }) // => 1
 * order.size // => 2
 * ```
 */
export class TurnOrder {
  private root: Node | null = null;
  private seed = 0x2545f491;

  /** Number of keys in the set. */
  get size(): number {
    return size(this.root);
  }

  /** Adds a key; returns false when it was already present. */
  insert(key: TurnKey): boolean {
    const node: Node = {
      tag: key.tag,
      joinSeq: key.joinSeq,
      priority: this.nextPriority(),
      size: 1,
      left: null,
      right: null,
    };
    const before = this.size;
    this.root = this.insertAt(this.root, node);
    return this.size > before;
  }

  /** Removes a key; returns false when it was absent. */
  delete(key: TurnKey): boolean {
    let parent: Node | null = null;
    let node = this.root;
    while (node !== null) {
      const c = compareTurn(key, node);
      if (c === 0) break;
      parent = node;
      node = c < 0 ? node.left : node.right;
    }
    if (node === null) return false;
    const replacement = this.merge(node.left, node.right);
    if (parent === null) this.root = replacement;
    else if (parent.left === node) parent.left = replacement;
    else parent.right = replacement;
    // Fix the sizes along the search path.
    let n = this.root;
    while (n !== null && n !== replacement) {
      n.size -= 1;
      const c = compareTurn(key, n);
      n = c < 0 ? n.left : n.right;
    }
    return true;
  }

  /** True when the key is in the set. */
  has(key: TurnKey): boolean {
    let node = this.root;
    while (node !== null) {
      const c = compareTurn(key, node);
      if (c === 0) return true;
      node = c < 0 ? node.left : node.right;
    }
    return false;
  }

  /** Number of keys strictly before `key`. */
  rank(key: TurnKey): number {
    let node = this.root;
    let before = 0;
    while (node !== null) {
      const c = compareTurn(key, node);
      if (c <= 0) node = node.left;
      else {
        before += size(node.left) + 1;
        node = node.right;
      }
    }
    return before;
  }

  /** The first key, or `null` when empty. */
  min(): TurnKey | null {
    let node = this.root;
    if (node === null) return null;
    while (node.left !== null) node = node.left;
    return { tag: node.tag, joinSeq: node.joinSeq };
  }

  /** Removes every key. */
  clear(): void {
    this.root = null;
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

  /** Inserts by descending to a leaf and rotating up: no allocation on the way. */
  private insertAt(n: Node | null, node: Node): Node {
    if (n === null) return node;
    const c = compareTurn(node, n);
    if (c === 0) return n;
    if (c < 0) {
      n.left = this.insertAt(n.left, node);
      if (n.left.priority > n.priority) return this.rotateRight(n);
    } else {
      n.right = this.insertAt(n.right, node);
      if (n.right.priority > n.priority) return this.rotateLeft(n);
    }
    n.size = size(n.left) + size(n.right) + 1;
    return n;
  }

  private rotateRight(n: Node): Node {
    const l = n.left as Node;
    n.left = l.right;
    l.right = n;
    n.size = size(n.left) + size(n.right) + 1;
    l.size = size(l.left) + n.size + 1;
    return l;
  }

  private rotateLeft(n: Node): Node {
    const r = n.right as Node;
    n.right = r.left;
    r.left = n;
    n.size = size(n.left) + size(n.right) + 1;
    r.size = n.size + size(r.right) + 1;
    return r;
  }

  private merge(a: Node | null, b: Node | null): Node | null {
    if (a === null) return b;
    if (b === null) return a;
    if (a.priority > b.priority) {
      a.right = this.merge(a.right, b);
      a.size = size(a.left) + size(a.right) + 1;
      return a;
    }
    b.left = this.merge(a, b.left);
    b.size = size(b.left) + size(b.right) + 1;
    return b;
  }
}
