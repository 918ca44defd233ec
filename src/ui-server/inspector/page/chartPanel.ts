/// <reference lib="dom" />
/**
 * The selected actor's statechart panel: a word while ELK lays the chart
 * out (or why there is none), then the chart with its active states lit,
 * scrolled to the state the actor is in when the chart is wider than the
 * panel (a phone). A layout that ends after the selection moved on is
 * dropped, never drawn over the next actor's.
 */
import type { StatechartGraph } from '../machineGraph.js';
import { highlight, renderChart } from './renderChart.js';

/** What the panel asks the page while the layout runs. */
export interface ChartPanelHooks {
  /** Still the selection the chart was asked for. */
  current(): boolean;
  /** The active states now (they may have moved during the layout). */
  active(): string[];
  /** The chart is drawn: the page highlights it on later actor frames. */
  drawn(svg: SVGSVGElement): void;
}

/** Fills `host` with the chart of `graph` (null: the actor is not a state machine). */
export function drawChartPanel(
  host: HTMLElement,
  graph: StatechartGraph | null,
  hooks: ChartPanelHooks,
): void {
  const p = document.createElement('p');
  p.className = 'muted';
  if (graph === null) {
    p.textContent = 'not a state machine: no statechart to draw';
    host.replaceChildren(p);
    return;
  }
  p.textContent = 'laying the statechart out…';
  host.replaceChildren(p);
  renderChart(graph).then(
    ({ svg }) => {
      if (!hooks.current()) return; // selection moved on meanwhile
      hooks.drawn(svg);
      highlight(svg, hooks.active());
      host.replaceChildren(svg);
      scrollToActive(host, svg);
      document.body.dataset.chart = 'drawn';
    },
    (err: unknown) => {
      if (!hooks.current()) return;
      p.className = 'alarm';
      p.textContent = `could not lay the statechart out: ${String((err as Error)?.message ?? err)}`;
    },
  );
}

/** A chart wider than its panel opens scrolled to the state the actor is in. */
function scrollToActive(box: HTMLElement, svg: SVGSVGElement): void {
  const leaf = svg.querySelector('g.state.leaf.active > rect');
  if (!leaf || box.scrollWidth <= box.clientWidth) return;
  const r = leaf.getBoundingClientRect();
  const b = box.getBoundingClientRect();
  box.scrollLeft += r.left + r.width / 2 - (b.left + b.width / 2);
}
