/**
 * uPlot itself, bundled on its own and served at CHART_ENGINE_PATH
 * (chartEnginePath.ts): about 52 KB of what was the board's script, which
 * only the admin's dashboard draws with, so the board's first paint neither
 * loads nor compiles it (TimeChart.tsx imports it when a chart mounts).
 */
export { default } from 'uplot';
