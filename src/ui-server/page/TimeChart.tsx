/// <reference lib="dom" />
/**
 * One small time chart of the admin dashboard, drawn by uPlot on a canvas
 * (docs/board.md says why uPlot). The chart is made once, when the component
 * mounts, and given new data in place (`setData`), so a refresh costs one
 * redraw of the canvas and no DOM; it follows its box's width. Under the
 * caption, the latest value and the peak of each series in words, for a
 * reader who cannot see the canvas.
 */
import { useEffect, useRef } from 'preact/hooks';
import type uPlot from 'uplot';
import type * as ChartEngine from './chartEngine.js';
import { CHART_ENGINE_PATH } from './chartEnginePath.js';

export interface ChartLine {
  label: string;
  values: ReadonlyArray<number | null>;
  color: string;
}

interface Props {
  /** A stable name (`data-chart`), also the browser test's handle. */
  name: string;
  caption: string;
  /** Seconds since the epoch, one per value. */
  t: readonly number[];
  lines: readonly ChartLine[];
  /** How a value reads in the summary: `3`, `4.2 s`. */
  format?: (v: number) => string;
}

const HEIGHT = 140;
let engine: Promise<typeof uPlot> | null = null;

/**
 * uPlot, loaded once from its own script (a path in a variable: esbuild
 * leaves the import to the browser); a failed load is retried by the next chart.
 */
function loadEngine(): Promise<typeof uPlot> {
  const path: string = CHART_ENGINE_PATH;
  engine ??= (import(path) as Promise<typeof ChartEngine>).then(
    (m) => m.default,
    (err: unknown) => {
      engine = null;
      throw err;
    },
  );
  return engine;
}

/** `14:05`: one line of x labels (uPlot's default adds a date line the chart has no room for). */
const hhmm = (_u: uPlot, splits: number[]) =>
  splits.map((s) => new Date(s * 1000).toTimeString().slice(0, 5));

function summary(line: ChartLine, format: (v: number) => string): string {
  const known = line.values.filter((v): v is number => v !== null);
  const last = line.values.at(-1);
  const now = last === null || last === undefined ? '–' : format(last);
  const peak = known.length === 0 ? '–' : format(Math.max(...known));
  return `${line.label} now ${now}, peak ${peak}`;
}

/** Axis and grid colours from the page's palette, so dark mode applies. */
function palette(): { fg: string; grid: string } {
  const css = getComputedStyle(document.documentElement);
  return {
    fg: css.getPropertyValue('--muted').trim() || '#555',
    grid: css.getPropertyValue('--line').trim() || '#0002',
  };
}

export function TimeChart({ name, caption, t, lines, format = String }: Props) {
  const host = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const data = [t, ...lines.map((l) => l.values)] as unknown as uPlot.AlignedData;
  const labels = lines.map((l) => l.label).join('|');
  // The engine may arrive renders later: the chart starts from the latest data.
  const latest = useRef(data);
  latest.current = data;

  useEffect(() => {
    const el = host.current;
    if (el === null) return;
    let made: uPlot | null = null;
    let resize: ResizeObserver | null = null;
    let gone = false;
    void loadEngine().then((UPlot) => {
      if (gone) return;
      made = draw(UPlot, el);
      resize = new ResizeObserver(() => {
        made?.setSize({ width: Math.max(160, el.clientWidth), height: HEIGHT });
      });
      resize.observe(el);
    });
    return () => {
      gone = true;
      resize?.disconnect();
      made?.destroy();
      plot.current = null;
    };
    // Made again only when its series change; new data goes through setData.
  }, [labels]);

  /** Makes the chart in `el` with the data of this render. */
  function draw(UPlot: typeof uPlot, el: HTMLDivElement): uPlot {
    const { fg, grid } = palette();
    const axis = { stroke: fg, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid } };
    const made = new UPlot(
      {
        width: Math.max(160, el.clientWidth),
        height: HEIGHT,
        legend: { show: false },
        cursor: { show: true, drag: { x: false, y: false } },
        // From 0, with headroom above the peak, and at least 0..1 for a flat zero line.
        scales: { y: { range: (_u, _min, max) => [0, Math.max(1, Math.ceil(max * 1.1))] } },
        axes: [
          { ...axis, values: hhmm },
          { ...axis, size: 40 },
        ],
        series: [{}, ...lines.map((l) => ({ label: l.label, stroke: l.color, width: 1.5 }))],
      },
      latest.current,
      el,
    );
    plot.current = made;
    return made;
  }

  useEffect(() => {
    plot.current?.setData(data);
  });

  return (
    <figure data-chart={name} data-points={t.length}>
      <figcaption>{caption}</figcaption>
      <div ref={host} class="chart" />
      <p class="chart-summary">{lines.map((l) => summary(l, format)).join(' · ')}</p>
    </figure>
  );
}
