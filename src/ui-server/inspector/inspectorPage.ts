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

/** The page's HTML. The admin token comes from the URL fragment (`/inspect#token=...`). */
export const INSPECTOR_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>roundtable inspector</title>
<style>
  body { font: 13px system-ui, sans-serif; margin: 0; background: #f4f4f6; color: #222; }
  header { display: flex; gap: 1rem; align-items: center; padding: .5rem 1rem; background: #23263a; color: #fff; }
  header .status { margin-left: auto; font-size: 12px; opacity: .8; }
  main { display: grid; grid-template-columns: 320px 1fr 340px; gap: .6rem; padding: .6rem; height: calc(100vh - 3.2rem); box-sizing: border-box; }
  section { background: #fff; border-radius: 6px; padding: .5rem; overflow: auto; box-shadow: 0 1px 2px #0002; }
  h2 { font-size: 12px; text-transform: uppercase; letter-spacing: .05em; margin: 0 0 .4rem; color: #555; }
  ul.tree, ul.tree ul { list-style: none; margin: 0; padding-left: .9rem; }
  ul.tree { padding-left: 0; }
  .node { display: flex; gap: .35rem; align-items: baseline; padding: 1px 3px; border-radius: 3px; cursor: pointer; }
  .node:hover { background: #eef; }
  .node.selected { background: #dde3ff; }
  .node .kind { font-size: 10px; color: #777; }
  .node .restarts { font-size: 11px; color: #a60; }
  .node .exit { font-size: 11px; color: #a11; }
  .st-running, .st-active { color: #176d2b; }
  .st-restarting { color: #a60; }
  .st-stopped, .st-done, .st-shutdown { color: #777; }
  .st-error, .st-given_up { color: #a11; }
  #chart svg { width: 100%; max-height: 55vh; }
  .node .name { white-space: nowrap; }
  #chart .state rect { fill: #fff; stroke: #99a; }
  #chart .state.active > rect { fill: #e3f7e6; stroke: #1a8a36; stroke-width: 2; }
  #chart .state.leaf.active > rect { fill: #9fe3ad; }
  #chart .state text { font-size: 11px; }
  #chart .edge path { fill: none; stroke: #778; marker-end: url(#arrow); }
  #chart .edge text { font-size: 9px; fill: #446; }
  pre { background: #f6f6fa; padding: .4rem; font-size: 11px; overflow: auto; max-height: 14rem; margin: 0; }
  table { border-collapse: collapse; width: 100%; font-size: 11px; }
  td { border-top: 1px solid #eee; padding: 2px 3px; vertical-align: top; }
  .alarm { color: #a11; }
  .muted { color: #888; }
  #monitor-list { list-style: none; padding: 0; margin: .2rem 0 0; font-size: 11px; }
  #monitor-list li { padding: 1px 0; }
  #monitor-list li.inferred .arrow { border-bottom: 1px dashed #888; }
  .actions { display: flex; gap: .4rem; align-items: center; margin: 0 0 .4rem; }
  .actions button { font: inherit; padding: 1px 8px; }
  #exit-result.alarm { color: #a11; }
</style>
</head>
<body>
<header><strong>roundtable inspector</strong><span class="status" id="status">connecting</span></header>
<main>
<section><h2>Supervision tree</h2><div id="tree"></div>
<h2>Monitors</h2><p class="muted" id="monitors"></p><ul id="monitor-list"></ul></section>
<section><h2 id="actor-title">Select an actor</h2>
<div class="actions" id="actions" hidden><select id="exit-reason" aria-label="exit reason">
<option value="kill">kill</option><option value="shutdown">shutdown</option><option value="normal">normal</option><option value="error">error</option>
</select><button id="exit" type="button">Exit this child</button><span id="exit-result" class="muted"></span></div>
<div id="chart"></div>
<h2>Context</h2><pre id="context"></pre>
<h2>Last events</h2><table id="events"></table></section>
<section><h2>System events</h2><table id="timeline"></table></section>
</main>
<script type="module" src="/inspect.js"></script>
</body>
</html>
`;
