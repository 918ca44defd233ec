/**
 * Lays a statechart out as nested boxes: the children of a compound state in
 * columns by their distance from its initial state (so the main path reads
 * left to right), the regions of a parallel state side by side. Pure and
 * DOM-free, so it is tested in Node; the page only draws the result.
 */
import type { GraphEdge, GraphNode, StatechartGraph } from '../machineGraph.js';

export interface Box {
  id: string;
  label: string;
  x: number;
  y: number;
  w: number;
  h: number;
  leaf: boolean;
  depth: number;
}

export interface ChartLayout {
  width: number;
  height: number;
  /** Outer boxes first, so inner ones draw on top. */
  boxes: Box[];
}

const CHAR_W = 6.6;
const LEAF_H = 28;
const HEADER = 20;
const PAD = 10;
const GAP = 26;

interface Sized {
  node: GraphNode;
  w: number;
  h: number;
  /** Child positions relative to this box. */
  kids: Array<{ s: Sized; x: number; y: number }>;
}

/** Children of `id` in columns by BFS distance from the initial child along sibling edges. */
function columns(
  kids: GraphNode[],
  initial: string | null,
  edges: GraphEdge[],
  owner: Map<string, string>,
): GraphNode[][] {
  const ids = new Set(kids.map((k) => k.id));
  // Map any descendant to the child of this compound that contains it.
  const lift = (id: string): string | null => {
    let cur: string | undefined = id;
    while (cur !== undefined && !ids.has(cur)) cur = owner.get(cur);
    return cur ?? null;
  };
  const next = new Map<string, string[]>();
  for (const e of edges) {
    const a = lift(e.source);
    const b = lift(e.target);
    if (a === null || b === null || a === b) continue;
    next.set(a, [...(next.get(a) ?? []), b]);
  }
  const layer = new Map<string, number>();
  const start = initial !== null && ids.has(initial) ? initial : kids[0]?.id;
  const queue = start === undefined ? [] : [start];
  if (start !== undefined) layer.set(start, 0);
  while (queue.length > 0) {
    const cur = queue.shift()!;
    for (const n of next.get(cur) ?? []) {
      if (layer.has(n)) continue;
      layer.set(n, layer.get(cur)! + 1);
      queue.push(n);
    }
  }
  let last = Math.max(-1, ...layer.values());
  const cols: GraphNode[][] = [];
  for (const k of kids) {
    let l = layer.get(k.id);
    if (l === undefined) {
      last += 1;
      l = last;
    }
    const col = cols[l] ?? [];
    col.push(k);
    cols[l] = col;
  }
  return cols.filter((c) => c !== undefined);
}

function size(node: GraphNode, g: Graphish): Sized {
  const kids = g.children.get(node.id) ?? [];
  const labelW = node.key.length * CHAR_W + 2 * PAD;
  if (kids.length === 0) return { node, w: Math.max(70, labelW), h: LEAF_H, kids: [] };
  const cols = node.type === 'parallel' ? [kids] : columns(kids, node.initial, g.edges, g.owner);
  const placed: Sized['kids'] = [];
  if (node.type === 'parallel') {
    // Regions side by side.
    let x = PAD;
    let h = 0;
    for (const k of kids) {
      const s = size(k, g);
      placed.push({ s, x, y: HEADER });
      x += s.w + PAD;
      h = Math.max(h, s.h);
    }
    return { node, w: Math.max(labelW, x), h: HEADER + h + PAD, kids: placed };
  }
  let x = PAD;
  let h = 0;
  for (const col of cols) {
    let y = HEADER;
    let w = 0;
    for (const k of col) {
      const s = size(k, g);
      placed.push({ s, x, y });
      y += s.h + GAP / 2;
      w = Math.max(w, s.w);
    }
    h = Math.max(h, y - GAP / 2);
    x += w + GAP;
  }
  return { node, w: Math.max(labelW, x - GAP + PAD), h: h + PAD, kids: placed };
}

interface Graphish {
  children: Map<string, GraphNode[]>;
  owner: Map<string, string>;
  edges: GraphEdge[];
}

/**
 * @example
 * ```ts
 * const g = { rootId: 'w', edges: [{ id: 'e', source: 'w.idle', target: 'w.busy', label: 'GO', guard: null }], nodes: [
 *   { id: 'w', key: 'w', type: 'compound', parent: null, initial: 'w.idle' },
 *   { id: 'w.idle', key: 'idle', type: 'atomic', parent: 'w', initial: null },
 *   { id: 'w.busy', key: 'busy', type: 'atomic', parent: 'w', initial: null } ] }
 * const l = layoutChart(g)
 * l.boxes.map((b) => b.id) // => ['w', 'w.idle', 'w.busy']
 * l.boxes[1].x < l.boxes[2].x // => true
 * l.boxes[2].leaf // => true
 * ```
 */
export function layoutChart(graph: StatechartGraph): ChartLayout {
  const children = new Map<string, GraphNode[]>();
  const owner = new Map<string, string>();
  let root: GraphNode | undefined;
  for (const n of graph.nodes) {
    if (n.parent === null) root = n;
    else {
      owner.set(n.id, n.parent);
      children.set(n.parent, [...(children.get(n.parent) ?? []), n]);
    }
  }
  if (!root) return { width: 0, height: 0, boxes: [] };
  const sized = size(root, { children, owner, edges: graph.edges });
  const boxes: Box[] = [];
  const place = (s: Sized, x: number, y: number, depth: number) => {
    boxes.push({
      id: s.node.id,
      label: s.node.key,
      x,
      y,
      w: s.w,
      h: s.h,
      leaf: s.kids.length === 0,
      depth,
    });
    for (const k of s.kids) place(k.s, x + k.x, y + k.y, depth + 1);
  };
  place(sized, 0, 0, 0);
  return { width: sized.w, height: sized.h, boxes };
}
