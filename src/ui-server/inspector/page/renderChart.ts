/// <reference lib="dom" />
/**
 * Draws a statechart layout (layoutChart.ts, ELK) as SVG: states as nested
 * boxes (the active ones highlighted), transitions as routed lines with
 * their event names on a backing so a crossing line never hides a word.
 * Text is measured with a canvas in the chart's own fonts before the
 * layout, so ELK leaves each label the room it really takes.
 */
import { INSPECT_ELK_PATH } from '../inspectorProtocol.js';
import type { StatechartGraph } from '../machineGraph.js';
import type * as ElkEngine from './elkEngine.js';
import type { Measure } from './elkGraph.js';
import { type ChartLayout, layoutChart } from './layoutChart.js';

const NS = 'http://www.w3.org/2000/svg';
/** The chart's fonts; the page's CSS names the same (`#chart .state text`, `.edge text`). */
export const STATE_FONT = '12px system-ui, sans-serif';
export const EDGE_FONT = '11px ui-monospace, "DejaVu Sans Mono", monospace';

function el<K extends keyof SVGElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | number>,
): SVGElementTagNameMap[K] {
  const e = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  return e;
}

let ctx: CanvasRenderingContext2D | null = null;
/** Text widths from a canvas in the chart's fonts. */
export const measureText: Measure = (text, kind) => {
  ctx ??= document.createElement('canvas').getContext('2d');
  const px = kind === 'state' ? 12 : 11;
  if (!ctx) return { w: text.length * px * 0.62, h: px + 2 };
  ctx.font = kind === 'state' ? STATE_FONT : EDGE_FONT;
  return { w: ctx.measureText(text).width, h: px + 2 };
};

let engine: Promise<ReturnType<typeof ElkEngine.newElk>> | null = null;

/**
 * ELK, loaded once from its own script (a path in a variable: esbuild leaves
 * the import to the browser instead of bundling ELK into the page). Called
 * early to warm it; a failed load is retried on the next chart.
 */
export function loadElk(): Promise<ReturnType<typeof ElkEngine.newElk>> {
  const path: string = INSPECT_ELK_PATH;
  engine ??= (import(path) as Promise<typeof ElkEngine>).then(
    (m) => m.newElk(),
    (err: unknown) => {
      engine = null;
      throw err;
    },
  );
  return engine;
}

const byShape = new Map<string, Promise<ChartLayout>>();

/** One layout per machine shape: every TaskRunner (and each restart) draws the same graph. */
function cachedLayout(graph: StatechartGraph): Promise<ChartLayout> {
  const key = JSON.stringify(graph);
  let p = byShape.get(key);
  if (!p) {
    p = loadElk().then((elk) => layoutChart(graph, elk, measureText));
    byShape.set(key, p);
    p.catch(() => byShape.delete(key));
  }
  return p;
}

/** Builds the SVG once per graph; `highlight` then only toggles classes. */
export async function renderChart(
  graph: StatechartGraph,
): Promise<{ svg: SVGSVGElement; layout: ChartLayout }> {
  const layout = await cachedLayout(graph);
  const m = 4;
  const svg = el('svg', {
    viewBox: `${-m} ${-m} ${layout.width + 2 * m} ${layout.height + 2 * m}`,
    role: 'img',
    'aria-label': `statechart of ${graph.rootId}: ${layout.boxes.length} states, ${graph.edges.length} transitions`,
  });
  // Natural size, shrunk to the panel down to 3/4 (still readable); wider, the panel scrolls.
  const w = layout.width + 2 * m;
  svg.setAttribute('width', String(w));
  svg.setAttribute('height', String(layout.height + 2 * m));
  svg.style.maxWidth = '100%';
  // Rounded up: rounded down, the floor would sit a hair under 3/4.
  svg.style.minWidth = `${Math.ceil(w * 0.75)}px`;
  svg.style.height = 'auto';
  const defs = el('defs', {});
  const marker = el('marker', {
    id: 'arrow',
    viewBox: '0 0 10 10',
    refX: 9,
    refY: 5,
    markerWidth: 7,
    markerHeight: 7,
    orient: 'auto-start-reverse',
  });
  marker.append(el('path', { d: 'M0,0 L10,5 L0,10 z', class: 'arrowhead' }));
  defs.append(marker);
  svg.append(defs);
  for (const b of layout.boxes) {
    const g = el('g', {
      class: `state${b.leaf ? ' leaf' : ''}${b.type === 'final' ? ' final' : ''}`,
      'data-state-id': b.id,
    });
    g.append(el('rect', { x: b.x, y: b.y, width: b.w, height: b.h, rx: b.leaf ? 8 : 6 }));
    if (b.type === 'final') {
      g.append(el('rect', { x: b.x + 3, y: b.y + 3, width: b.w - 6, height: b.h - 6, rx: 6 }));
    }
    const t = b.leaf
      ? el('text', {
          x: b.labelAt.x,
          y: b.labelAt.y,
          'text-anchor': 'middle',
          'dominant-baseline': 'central',
        })
      : el('text', { x: b.labelAt.x, y: b.labelAt.y, 'dominant-baseline': 'hanging' });
    t.textContent = b.label;
    g.append(t);
    svg.append(g);
  }
  for (const i of layout.initials)
    svg.append(el('circle', { class: 'initial', cx: i.x, cy: i.y, r: i.r }));
  // Lines first, then every label on top of every line.
  const labels: SVGGElement[] = [];
  for (const e of layout.edges) {
    const d = e.points.map((p, i) => `${i === 0 ? 'M' : 'L'}${p.x},${p.y}`).join(' ');
    const g = el('g', { class: e.label ? 'edge' : 'edge initial-edge', 'data-edge': e.id });
    g.append(el('path', { d }));
    svg.append(g);
    if (e.label) {
      const lg = el('g', { class: 'edge-label', 'data-edge': e.id });
      lg.append(
        el('rect', { x: e.label.x, y: e.label.y, width: e.label.w, height: e.label.h, rx: 3 }),
      );
      const t = el('text', {
        x: e.label.x + e.label.w / 2,
        y: e.label.y + e.label.h / 2,
        'text-anchor': 'middle',
        'dominant-baseline': 'central',
      });
      t.textContent = e.label.text;
      lg.append(t);
      labels.push(lg);
    }
  }
  svg.append(...labels);
  return { svg, layout };
}

/** Marks the active states (and only them). */
export function highlight(svg: SVGSVGElement, active: readonly string[]): void {
  const on = new Set(active);
  svg.querySelectorAll<SVGGElement>('g.state').forEach((g) => {
    g.classList.toggle('active', on.has(g.dataset.stateId ?? ''));
  });
}
