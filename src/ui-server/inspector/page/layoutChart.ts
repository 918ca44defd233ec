/**
 * Lays a statechart out with ELK's layered algorithm (elkjs, what Stately's
 * own tools build on): states as nested boxes, transitions routed
 * orthogonally around them, every event name placed by ELK as a label with
 * its own room, so labels never overlap each other or a state, and each
 * self-transition gets its own loop. The main path reads top to bottom from
 * a dot that points at each compound state's initial child.
 *
 * DOM-free: the page passes a `measure` that asks a canvas for text widths;
 * Node tests use the monospace estimate. The engine is passed in
 * (elkEngine.ts): the page loads it as a script of its own after its first
 * paint, so this module only imports ELK's types.
 */
import type { ELK, ElkExtendedEdge, ElkNode } from 'elkjs/lib/elk.bundled.js';
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
  /** `final` states are drawn with a double border. */
  type: string;
  /** Where ELK put the state's name. */
  labelAt: { x: number; y: number };
}

export interface Rect {
  x: number;
  y: number;
  w: number;
  h: number;
}

export interface EdgeLayout {
  id: string;
  source: string;
  target: string;
  /** The route: start, bends, end. */
  points: Array<{ x: number; y: number }>;
  /** Null for the initial-state pointers, which carry no event. */
  label: (Rect & { text: string }) | null;
}

export interface ChartLayout {
  width: number;
  height: number;
  /** Outer boxes first, so inner ones draw on top. */
  boxes: Box[];
  /** The dots that point at initial states. */
  initials: Array<{ x: number; y: number; r: number }>;
  edges: EdgeLayout[];
}

/** Width and height of `text` as drawn: a state's name or an edge's label. */
export type Measure = (text: string, kind: 'state' | 'edge') => { w: number; h: number };

/**
 * A monospace estimate (0.62 em a character): what Node tests use.
 *
 * @example
 * ```ts
 * estimateText('ready', 'state') // => { w: 37.2, h: 14 }
 * estimateText('cancel', 'edge') // => { w: 40.92, h: 13 }
 * ```
 */
export const estimateText: Measure = (text, kind) => {
  const px = kind === 'state' ? 12 : 11;
  return { w: Math.round(text.length * px * 0.62 * 100) / 100, h: px + 2 };
};

/**
 * What an edge says: its event, and its guard in brackets.
 *
 * @example
 * ```ts
 * edgeText({ id: 'e', source: 'a', target: 'b', label: 'done: loadRow', guard: 'guard' }) // => 'done: loadRow [guard]'
 * edgeText({ id: 'e', source: 'a', target: 'b', label: 'cancel', guard: null }) // => 'cancel'
 * ```
 */
export function edgeText(e: GraphEdge): string {
  return e.guard ? `${e.label} [${e.guard}]` : e.label;
}

const LEAF_H = 32;
const LEAF_PAD_X = 14;
const MIN_LEAF_W = 64;
const HEADER = 22;
const DOT = 9;
const INITIAL_PREFIX = '\u0000initial:';
/** A self-transition's label, as a node of its own (see elkGraph). */
const LOOP_PREFIX = '\u0000loop:';
const LOOP_OUT = '\u0000out';
const LOOP_IN = '\u0000in';
const ROOT_ID = '\u0000root';

const ROOT_OPTIONS = {
  'elk.algorithm': 'layered',
  'elk.direction': 'DOWN',
  'elk.hierarchyHandling': 'INCLUDE_CHILDREN',
  'elk.edgeRouting': 'ORTHOGONAL',
  // Every coordinate absolute: nothing to add up when drawing.
  'elk.json.shapeCoords': 'ROOT',
  'elk.json.edgeCoords': 'ROOT',
  'elk.spacing.nodeNode': '28',
  'elk.layered.spacing.nodeNodeBetweenLayers': '36',
  'elk.spacing.edgeLabel': '3',
  'elk.spacing.edgeEdge': '12',
  'elk.layered.spacing.edgeEdgeBetweenLayers': '10',
  'elk.layered.spacing.edgeNodeBetweenLayers': '14',
  'elk.edgeLabels.placement': 'CENTER',
  'elk.layered.nodePlacement.strategy': 'NETWORK_SIMPLEX',
  'elk.layered.considerModelOrder.strategy': 'NODES_AND_EDGES',
  'elk.padding': '[top=8,left=8,bottom=8,right=8]',
};

function compoundOptions(): Record<string, string> {
  return {
    'elk.padding': `[top=${HEADER + 14},left=14,bottom=14,right=14]`,
    'elk.nodeLabels.placement': '[H_LEFT, V_TOP, INSIDE]',
    'elk.nodeSize.constraints': '[NODE_LABELS]',
  };
}

/**
 * The ELK graph of a statechart: one ELK node per state (compound ones
 * holding their children and a dot for their initial state), one edge per
 * transition with its measured label, all edges at the top (ELK finds each
 * edge's common ancestor itself with `INCLUDE_CHILDREN`). A
 * self-transition's label becomes a node next to its state, with an edge
 * out to it and one back: ELK would stack several loops on one side of a
 * small box a few pixels apart (the RunnerPool's three), this way each loop
 * is its own.
 *
 * @example
 * ```ts
 * const g = { rootId: 'w', edges: [{ id: 'e', source: 'w.idle', target: 'w.busy', label: 'GO', guard: null }], nodes: [
 *   { id: 'w', key: 'w', type: 'compound', parent: null, initial: 'w.idle' },
 *   { id: 'w.idle', key: 'idle', type: 'atomic', parent: 'w', initial: null },
 *   { id: 'w.busy', key: 'busy', type: 'atomic', parent: 'w', initial: null } ] }
 * const elk = elkGraph(g, estimateText)
 * elk.children[0].children.map((c) => c.id) // => ['\u0000initial:w', 'w.idle', 'w.busy']
 * elk.edges.map((e) => e.labels?.[0]?.text ?? null) // => [null, 'GO']
 * const loop = { ...g, edges: [{ id: 'e', source: 'w.idle', target: 'w.idle', label: 'TICK', guard: null }] }
 * elkGraph(loop, estimateText).children[0].children.map((c) => c.id).at(-1) // => '\u0000loop:e'
 * elkGraph(loop, estimateText).edges.map((e) => e.sources[0] + ' > ' + e.targets[0]).slice(0, 2) // => ['w.idle > \u0000loop:e', '\u0000loop:e > w.idle']
 * ```
 */
export function elkGraph(
  graph: StatechartGraph,
  measure: Measure,
): ElkNode & { children: ElkNode[]; edges: ElkExtendedEdge[] } {
  const kids = new Map<string, GraphNode[]>();
  let root: GraphNode | undefined;
  for (const n of graph.nodes) {
    if (n.parent === null) root = n;
    else kids.set(n.parent, [...(kids.get(n.parent) ?? []), n]);
  }
  const edges: ElkExtendedEdge[] = [];
  const known = new Set(graph.nodes.map((n) => n.id));
  const parentOf = new Map(graph.nodes.map((n) => [n.id, n.parent]));
  /** Self-transitions' label nodes, by the id of the node that holds them (null: the top). */
  const loops = new Map<string | null, ElkNode[]>();
  const labelOf = (e: GraphEdge) => {
    const text = edgeText(e);
    const size = measure(text, 'edge');
    return { text, width: Math.ceil(size.w) + 4, height: Math.ceil(size.h) + 2 };
  };
  for (const e of graph.edges) {
    if (e.source !== e.target || !known.has(e.source)) continue;
    const id = `${LOOP_PREFIX}${e.id}`;
    const l = labelOf(e);
    const holder = parentOf.get(e.source) ?? null;
    loops.set(holder, [...(loops.get(holder) ?? []), { id, width: l.width, height: l.height }]);
    edges.push({ id: `${e.id}${LOOP_OUT}`, sources: [e.source], targets: [id] });
    edges.push({ id: `${e.id}${LOOP_IN}`, sources: [id], targets: [e.source] });
  }
  const node = (n: GraphNode): ElkNode => {
    const children = kids.get(n.id) ?? [];
    const name = measure(n.key, 'state');
    if (children.length === 0) {
      return {
        id: n.id,
        width: Math.max(MIN_LEAF_W, Math.ceil(name.w) + 2 * LEAF_PAD_X),
        height: LEAF_H,
      };
    }
    const inner = [...children.map(node), ...(loops.get(n.id) ?? [])];
    if (n.initial !== null && known.has(n.initial) && n.type !== 'parallel') {
      const dot = `${INITIAL_PREFIX}${n.id}`;
      inner.unshift({ id: dot, width: DOT, height: DOT });
      edges.push({ id: dot, sources: [dot], targets: [n.initial] });
    }
    return {
      id: n.id,
      labels: [{ text: n.key, width: Math.ceil(name.w), height: Math.ceil(name.h) }],
      layoutOptions: compoundOptions(),
      children: inner,
    };
  };
  const top = root === undefined ? [] : [node(root), ...(loops.get(null) ?? [])];
  for (const e of graph.edges) {
    if (!known.has(e.source) || !known.has(e.target) || e.source === e.target) continue;
    edges.push({ id: e.id, sources: [e.source], targets: [e.target], labels: [labelOf(e)] });
  }
  return { id: ROOT_ID, layoutOptions: ROOT_OPTIONS, children: top, edges };
}

/** Lays `graph` out with `elk`. Rejects with ELK's error for a graph it cannot lay out. */
export async function layoutChart(
  graph: StatechartGraph,
  elk: Pick<ELK, 'layout'>,
  measure: Measure = estimateText,
): Promise<ChartLayout> {
  const out = await elk.layout(elkGraph(graph, measure));
  const byId = new Map(graph.nodes.map((n) => [n.id, n]));
  const boxes: Box[] = [];
  const initials: ChartLayout['initials'] = [];
  const chips = new Map<string, Rect>();
  const walk = (n: ElkNode, depth: number) => {
    const x = n.x ?? 0;
    const y = n.y ?? 0;
    const w = n.width ?? 0;
    const h = n.height ?? 0;
    if (n.id.startsWith(INITIAL_PREFIX)) {
      initials.push({ x: x + w / 2, y: y + h / 2, r: w / 2 });
      return;
    }
    if (n.id.startsWith(LOOP_PREFIX)) {
      chips.set(n.id.slice(LOOP_PREFIX.length), { x, y, w, h });
      return;
    }
    const g = byId.get(n.id);
    if (g) {
      const leaf = (n.children ?? []).length === 0;
      const l = n.labels?.[0];
      boxes.push({
        id: n.id,
        label: g.key,
        x,
        y,
        w,
        h,
        leaf,
        depth,
        type: g.type,
        labelAt: leaf ? { x: x + w / 2, y: y + h / 2 } : { x: l?.x ?? x + 10, y: l?.y ?? y + 6 },
      });
    }
    for (const c of n.children ?? []) walk(c, g ? depth + 1 : depth);
  };
  walk(out, 0);
  const edges: EdgeLayout[] = [];
  const route = (e: ElkExtendedEdge | undefined) => {
    const s = e?.sections?.[0];
    return s ? [s.startPoint, ...(s.bendPoints ?? []), s.endPoint] : [];
  };
  const elkEdges = new Map(((out.edges ?? []) as ElkExtendedEdge[]).map((e) => [e.id, e]));
  for (const e of graph.edges) {
    const chip = chips.get(e.id);
    if (!chip) continue;
    // Out to the label and back; the stretch across the label hides under it.
    edges.push({
      id: e.id,
      source: e.source,
      target: e.target,
      points: [
        ...route(elkEdges.get(`${e.id}${LOOP_OUT}`)),
        ...route(elkEdges.get(`${e.id}${LOOP_IN}`)),
      ],
      label: { text: edgeText(e), ...chip },
    });
  }
  for (const e of elkEdges.values()) {
    const s = e.sections?.[0];
    if (!s || e.id.endsWith(LOOP_OUT) || e.id.endsWith(LOOP_IN)) continue;
    const l = e.labels?.[0];
    edges.push({
      id: e.id,
      // Every edge given to ELK above has one source and one target.
      source: e.sources[0]!,
      target: e.targets[0]!,
      points: [s.startPoint, ...(s.bendPoints ?? []), s.endPoint],
      label:
        l === undefined
          ? null
          : { text: l.text ?? '', x: l.x ?? 0, y: l.y ?? 0, w: l.width ?? 0, h: l.height ?? 0 },
    });
  }
  return { width: out.width ?? 0, height: out.height ?? 0, boxes, initials, edges };
}

/**
 * True when two rectangles share any area (touching edges do not count).
 *
 * @example
 * ```ts
 * overlaps({ x: 0, y: 0, w: 10, h: 10 }, { x: 5, y: 5, w: 10, h: 10 }) // => true
 * overlaps({ x: 0, y: 0, w: 10, h: 10 }, { x: 10, y: 0, w: 10, h: 10 }) // => false
 * ```
 */
export function overlaps(a: Rect, b: Rect): boolean {
  return a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
}
