/**
 * Where the server answers with the chart engine's bundle (chartEngine.ts).
 * A file of its own: the page imports this path, not the engine, so uPlot
 * stays out of the board's script.
 */
export const CHART_ENGINE_PATH = '/board-charts.js';
