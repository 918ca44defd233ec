/**
 * Lays a statechart out with ELK's layered algorithm (elkjs, what Stately's
 * own tools build on): states as nested boxes, transitions routed
 * orthogonally around them, every event name placed by ELK as a label with
 * its own room, so labels never overlap each other or a state, and each
 * self-transition gets its own loop. The main path reads top to bottom from
 * a dot that points at each compound state's initial child.
 *
 * ELK's input is built in elkGraph.ts; this module runs ELK and reads its
 * result back as boxes, initial dots and routed, labelled edges. DOM-free: the page passes a `measure` that asks a canvas for text widths;
 * Node tests use the monospace estimate. The engine is passed in
 * (elkEngine.ts): the page loads it as a script of its own after its first
 * paint, so this module only imports ELK's types.
 */
import type { ELK, ElkExtendedEdge, ElkNode } from 'elkjs/lib/elk.bundled.js';
import type { StatechartGraph } from '../machineGraph.js';
import {
  edgeText,
  elkGraph,
  estimateText,
  INITIAL_PREFIX,
  LOOP_IN,
  LOOP_OUT,
  LOOP_PREFIX,
  type Measure,
} from './elkGraph.js';

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
