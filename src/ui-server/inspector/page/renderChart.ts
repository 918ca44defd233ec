/// <reference lib="dom" />
/**
 * Draws a statechart layout as SVG: states as nested boxes (the active ones
 * highlighted), transitions as curves with their event names.
 */
import type { StatechartGraph } from '../machineGraph.js';
import { type ChartLayout, layoutChart } from './layoutChart.js';

const NS = 'http://www.w3.org/2000/svg';

function el<K extends keyof SVGElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | number>,
): SVGElementTagNameMap[K] {
  const e = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  return e;
}

/** Builds the SVG once per graph; `highlight` then only toggles classes. */
export function renderChart(graph: StatechartGraph): { svg: SVGSVGElement; layout: ChartLayout } {
  const layout = layoutChart(graph);
  const m = 24;
  const svg = el('svg', {
    viewBox: `${-m} ${-m} ${layout.width + 2 * m} ${layout.height + 2 * m}`,
  });
  // Small charts are drawn larger than life, big ones fit the panel.
  svg.style.maxWidth = `${Math.max(480, (layout.width + 2 * m) * 1.8)}px`;
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
  marker.append(el('path', { d: 'M0,0 L10,5 L0,10 z', fill: '#778' }));
  defs.append(marker);
  svg.append(defs);
  const byId = new Map(layout.boxes.map((b) => [b.id, b]));
  for (const b of layout.boxes) {
    const g = el('g', { class: `state${b.leaf ? ' leaf' : ''}`, 'data-state-id': b.id });
    g.append(el('rect', { x: b.x, y: b.y, width: b.w, height: b.h, rx: 6 }));
    const t = el('text', { x: b.x + 8, y: b.y + (b.leaf ? b.h / 2 + 4 : 14) });
    t.textContent = b.label;
    g.append(t);
    svg.append(g);
  }
  for (const e of graph.edges) {
    const a = byId.get(e.source);
    const b = byId.get(e.target);
    if (!a || !b) continue;
    const g = el('g', { class: 'edge', 'data-edge': e.id });
    let d: string;
    let lx: number;
    let ly: number;
    if (a === b) {
      // A self-transition: a loop over the box's top edge.
      const x = a.x + a.w - 18;
      d = `M${x},${a.y} C${x - 10},${a.y - 22} ${x + 20},${a.y - 22} ${x + 10},${a.y}`;
      lx = x;
      ly = a.y - 16;
    } else {
      const forward = b.x >= a.x + a.w;
      const x1 = forward ? a.x + a.w : a.x + a.w / 2;
      const y1 = forward ? a.y + Math.min(a.h / 2, 14) : a.y + a.h;
      const x2 = forward ? b.x : b.x + b.w / 2;
      const y2 = forward ? b.y + Math.min(b.h / 2, 14) : b.y + b.h;
      const bend = forward ? 0 : 30;
      d = `M${x1},${y1} C${(x1 + x2) / 2},${y1 + bend} ${(x1 + x2) / 2},${y2 + bend} ${x2},${y2}`;
      lx = (x1 + x2) / 2;
      ly = (y1 + y2) / 2 + bend * 0.75 - 3;
    }
    g.append(el('path', { d }));
    const t = el('text', { x: lx, y: ly, 'text-anchor': 'middle' });
    t.textContent = e.guard ? `${e.label} [${e.guard}]` : e.label;
    g.append(t);
    svg.append(g);
  }
  return { svg, layout };
}

/** Marks the active states (and only them). */
export function highlight(svg: SVGSVGElement, active: readonly string[]): void {
  const on = new Set(active);
  svg.querySelectorAll<SVGGElement>('g.state').forEach((g) => {
    g.classList.toggle('active', on.has(g.dataset.stateId ?? ''));
  });
}
