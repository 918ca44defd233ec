/**
 * The inspector page: its HTML and its script, bundled from
 * `page/inspector.ts` with esbuild into memory, once per process.
 */
import { cachedBrowserBundle } from '../browserBundle.js';

/** A failed page build; `cause` holds esbuild's error. */
export class InspectorBundleError extends Error {
  override readonly name = 'InspectorBundleError';
  readonly code = 'INSPECTOR_PAGE_BUNDLE';
}

/** The bundled script (cached; a failed build is not, so a retry rebuilds). */
export const inspectorScript = cachedBrowserBundle(
  new URL('./page/inspector.ts', import.meta.url),
  (cause) => new InspectorBundleError('bundling the inspector page failed', { cause }),
);

/** ELK, bundled on its own (page/elkEngine.ts): the page imports it when it draws a chart. */
export const inspectorElkScript = cachedBrowserBundle(
  new URL('./page/elkEngine.ts', import.meta.url),
  (cause) => new InspectorBundleError('bundling the layout engine failed', { cause }),
);

/** The page's HTML. The admin token comes from the URL fragment (`/inspect#token=...`). */
export const INSPECTOR_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>roundtable inspector</title>
<style>
  :root { --bg: #f4f4f6; --panel: #fff; --fg: #1e1f24; --muted: #5c5f6b; --line: #e4e4ea;
    --hover: #eef0ff; --sel: #dde3ff; --ok: #176d2b; --warn: #8a4b00; --bad: #a11616;
    --head: #23263a; --pre: #f6f6fa; --state: #fff; --state-line: #8d90a6; --edge: #6a6d85;
    --edge-text: #33364d; --label-bg: #ffffffe6; --active: #e3f7e6; --active-leaf: #9fe3ad;
    --active-line: #1a8a36; --focus: #3b5bdb; }
  @media (prefers-color-scheme: dark) {
    :root { --bg: #14151b; --panel: #1d1f27; --fg: #e3e4ea; --muted: #a3a6b5; --line: #2e303b;
      --hover: #272b3d; --sel: #2f3760; --ok: #6fd68a; --warn: #f0b45a; --bad: #ff8080;
      --head: #0d0e13; --pre: #15161d; --state: #23252f; --state-line: #676b85; --edge: #9498b3;
      --edge-text: #d6d8e5; --label-bg: #1d1f27e6; --active: #1d3a26; --active-leaf: #2c6b3d;
      --active-line: #6fd68a; --focus: #8ea6ff; }
  }
  [hidden] { display: none !important; }
  body { font: 13px system-ui, sans-serif; margin: 0; background: var(--bg); color: var(--fg); }
  header { display: flex; flex-wrap: wrap; gap: .4rem 1rem; align-items: center; padding: .5rem 1rem; background: var(--head); color: #fff; }
  header h1 { font-size: 14px; margin: 0; }
  header a { color: #c9d3ff; }
  header .status { margin-left: auto; font-size: 12px; }
  main { display: grid; grid-template-columns: minmax(16rem, 22rem) minmax(0, 1fr) minmax(18rem, 26rem); gap: .6rem; padding: .6rem; height: calc(100vh - 2.6rem); box-sizing: border-box; }
  section { background: var(--panel); border-radius: 6px; padding: .5rem; overflow: auto; min-width: 0; box-shadow: 0 1px 2px #0003; }
  h2 { font-size: 12px; text-transform: uppercase; letter-spacing: .05em; margin: .2rem 0 .4rem; color: var(--muted); }
  #actor-title { text-transform: none; letter-spacing: 0; font-size: 13px; color: var(--fg); overflow-wrap: anywhere; }
  a { color: var(--focus); }
  ul.tree, ul.tree ul { list-style: none; margin: 0; padding-left: .9rem; }
  ul.tree { padding-left: 0; }
  li[role="treeitem"] { outline: none; }
  li[role="treeitem"]:focus-visible > .node { outline: 2px solid var(--focus); outline-offset: -2px; }
  .node { display: flex; flex-wrap: wrap; gap: 0 .35rem; align-items: baseline; padding: 2px 4px; border-radius: 3px; cursor: pointer; }
  .node:hover { background: var(--hover); }
  li[aria-selected="true"] > .node { background: var(--sel); }
  .node .name { overflow-wrap: anywhere; font-weight: 500; }
  .node .kind, .node .detail { font-size: 11px; color: var(--muted); }
  .node .detail { flex-basis: 100%; overflow-wrap: anywhere; }
  .node.fold .name { font-weight: 400; color: var(--muted); }
  .node .restarts { font-size: 11px; color: var(--warn); }
  .node .exit { font-size: 11px; color: var(--bad); flex-basis: 100%; overflow-wrap: anywhere; }
  .node .exit.muted { color: var(--muted); }
  .st-running, .st-active { color: var(--ok); }
  .st-restarting { color: var(--warn); }
  .st-stopped, .st-done, .st-shutdown { color: var(--muted); }
  .st-error, .st-given_up { color: var(--bad); }
  #chart { overflow: auto; max-height: 62vh; margin-bottom: .4rem; }
  #chart svg { display: block; }
  #chart .state rect { fill: var(--state); stroke: var(--state-line); }
  #chart .state.active > rect { fill: var(--active); stroke: var(--active-line); stroke-width: 2; }
  #chart .state.leaf.active > rect { fill: var(--active-leaf); }
  #chart .state text { font: 12px system-ui, sans-serif; fill: var(--fg); }
  #chart .state:not(.leaf) > text { font-weight: 600; }
  #chart circle.initial, #chart .arrowhead { fill: var(--edge); }
  #chart .edge path { fill: none; stroke: var(--edge); stroke-width: 1.2; marker-end: url(#arrow); }
  #chart .edge-label rect { fill: var(--label-bg); }
  #chart .edge-label text { font: 11px ui-monospace, "DejaVu Sans Mono", monospace; fill: var(--edge-text); }
  pre { background: var(--pre); padding: .4rem; font-size: 11px; overflow: auto; max-height: 14rem; margin: 0; }
  table { border-collapse: collapse; width: 100%; font-size: 11px; }
  td { border-top: 1px solid var(--line); padding: 2px 3px; vertical-align: top; overflow-wrap: anywhere; }
  td.when, td.kind { white-space: nowrap; }
  td .subject { font-weight: 600; }
  .sr-only { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
  tr.alarm, .alarm { color: var(--bad); }
  .muted { color: var(--muted); }
  #monitor-list { list-style: none; padding: 0; margin: .2rem 0 0; font-size: 11px; }
  #monitor-list li { padding: 1px 0; overflow-wrap: anywhere; }
  #monitor-list li.inferred .arrow { border-bottom: 1px dashed var(--muted); }
  .actions, .filters { display: flex; flex-wrap: wrap; gap: .4rem; align-items: center; margin: 0 0 .4rem; }
  .filters label { display: flex; gap: .25rem; align-items: center; }
  .filters input[type="search"] { width: 9rem; }
  button, select, input { font: inherit; color: inherit; background: var(--panel); border: 1px solid var(--state-line); border-radius: 3px; padding: 1px 6px; }
  button { cursor: pointer; }
  :focus-visible { outline: 2px solid var(--focus); outline-offset: 1px; }
  #job-link { display: inline-block; margin: 0 0 .4rem; }
  @media (max-width: 1200px) {
    main { grid-template-columns: minmax(15rem, 20rem) minmax(0, 1fr); grid-template-rows: minmax(0, 3fr) minmax(0, 2fr); }
    #timeline-panel { grid-column: 1 / -1; }
  }
  @media (max-width: 760px) {
    main { grid-template-columns: minmax(0, 1fr); grid-template-rows: none; height: auto; padding: .4rem; }
    section { overflow: visible; }
    #chart { max-height: none; }
  }
</style>
</head>
<body>
<header><h1>roundtable inspector</h1><a href="/">board</a><span class="status" id="status" role="status">connecting</span></header>
<main>
<section id="tree-panel" aria-labelledby="tree-heading"><h2 id="tree-heading">Supervision tree</h2><div id="tree"></div>
<h2>Monitors</h2><p class="muted" id="monitors"></p><ul id="monitor-list"></ul></section>
<section id="actor-panel" aria-labelledby="actor-title"><h2 id="actor-title">Select an actor</h2>
<a id="job-link" hidden></a>
<div class="actions" id="actions" hidden><select id="exit-reason" aria-label="exit reason">
<option value="kill">kill</option><option value="shutdown">shutdown</option><option value="normal">normal</option><option value="error">error</option>
</select><button id="exit" type="button">Exit this child</button><span id="exit-result" class="muted" role="status"></span></div>
<div id="chart" tabindex="0" role="region" aria-label="statechart"></div>
<h2>Context</h2><pre id="context" tabindex="0" aria-label="context"></pre>
<h2>Last events</h2><table><thead class="sr-only"><tr><th scope="col">time</th><th scope="col">event</th><th scope="col">from</th><th scope="col">payload</th></tr></thead><tbody id="events"></tbody></table></section>
<section id="timeline-panel" aria-labelledby="timeline-heading"><h2 id="timeline-heading">System events <span id="tl-count" class="muted"></span></h2>
<div class="filters" role="search" aria-label="filter the system events">
<label>actor <input id="tl-actor" type="search" placeholder="id, job or user" autocomplete="off"></label>
<label>kind <select id="tl-kind"><option value="">all</option><option value="start">start</option><option value="exit">exit</option><option value="restart">restart</option><option value="give_up">give_up</option><option value="intensity">intensity</option><option value="shutdown">shutdown</option><option value="grant">grant</option><option value="down">down</option></select></label>
<label><input id="tl-alarms" type="checkbox"> alarms only</label></div>
<table><thead class="sr-only"><tr><th scope="col">time</th><th scope="col">kind</th><th scope="col">what</th></tr></thead><tbody id="timeline"></tbody></table></section>
</main>
<script type="module" src="/inspect.js"></script>
</body>
</html>
`;
