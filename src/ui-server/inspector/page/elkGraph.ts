/**
 * The ELK graph of a statechart, ELK's input: one node per state sized by
 * its measured name, one edge per transition with its measured label, a dot
 * per compound state's initial child, and a node of its own for each
 * self-transition's label. layoutChart.ts hands it to ELK and reads the
 * result back by the node ids named here.
 *
 * DOM-free: the page passes a `measure` that asks a canvas for text widths;
 * Node tests use the monospace estimate. Only ELK's types are imported.
 */
import type { ElkExtendedEdge, ElkNode } from 'elkjs/lib/elk.bundled.js';
import type { GraphEdge, GraphNode, StatechartGraph } from '../machineGraph.js';

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
/** Id prefix of the dot that points at a compound state's initial child. */
export const INITIAL_PREFIX = '\u0000initial:';
/** A self-transition's label, as a node of its own (see elkGraph). */
export const LOOP_PREFIX = '\u0000loop:';
/** Id suffixes of a self-transition's two edges: out to its label node and back. */
export const LOOP_OUT = '\u0000out';
export const LOOP_IN = '\u0000in';
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
