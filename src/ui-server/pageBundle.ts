/**
 * The board page: its HTML shell and its script, bundled from
 * `src/ui-server/page/board.ts` with esbuild into memory. The bundle is built
 * once per process and shared by every server in it.
 */
import { cachedBrowserBundle } from './browserBundle.js';

/** A failed page build; `cause` holds esbuild's error. */
export class PageBundleError extends Error {
  override readonly name = 'PageBundleError';
  readonly code = 'UI_PAGE_BUNDLE';
}

/** The bundled page script (cached; a failed build is not cached, so a retry rebuilds). */
export const pageScript = cachedBrowserBundle(
  new URL('./page/board.ts', import.meta.url),
  (cause) => new PageBundleError('bundling the board page failed', { cause }),
);

/** The page's HTML. The token comes from the URL fragment, never sent to the server in a URL. */
export const PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>roundtable board</title>
<style>
  body { font: 14px system-ui, sans-serif; margin: 0; background: #f4f4f6; color: #222; }
  header { display: flex; gap: 1rem; align-items: center; padding: .6rem 1rem; background: #23263a; color: #fff; }
  header .status { margin-left: auto; font-size: 12px; opacity: .8; }
  main { display: grid; grid-template-columns: repeat(4, 1fr); gap: .8rem; padding: .8rem; }
  section h2 { font-size: 13px; text-transform: uppercase; letter-spacing: .05em; margin: 0 0 .5rem; }
  .card { background: #fff; border-radius: 6px; padding: .5rem .6rem; margin-bottom: .5rem; box-shadow: 0 1px 2px #0002; }
  .card .title { font-weight: 600; }
  .card .meta { font-size: 12px; color: #555; margin-top: .2rem; }
  .card pre { background: #111; color: #cfc; font-size: 11px; padding: .3rem; max-height: 8rem; overflow: auto; margin: .3rem 0 0; white-space: pre-wrap; }
  .card .why { color: #a11; font-size: 12px; margin-top: .2rem; }
  .card button { margin-top: .3rem; }
  form { display: flex; gap: .4rem; }
</style>
</head>
<body>
<header><strong>roundtable</strong>
<form id="create"><input name="title" placeholder="new task title" required>
<input name="image" placeholder="image" value="alpine:3" required>
<input name="command" placeholder="command" value="echo hello" required>
<button>create</button></form>
<span class="status" id="status">connecting</span></header>
<main>
<section data-column="queued"><h2>Queued</h2><div class="cards"></div></section>
<section data-column="running"><h2>Running</h2><div class="cards"></div></section>
<section data-column="done"><h2>Done</h2><div class="cards"></div></section>
<section data-column="failed"><h2>Failed</h2><div class="cards"></div></section>
</main>
<script type="module" src="/board.js"></script>
</body>
</html>
`;
