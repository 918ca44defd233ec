/**
 * The board page: its HTML shell and its script, bundled from
 * `src/ui-server/page/board.tsx` with esbuild into memory. The bundle is built
 * once per process and shared by every server in it.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import {
  BEARER_SUBPROTOCOL_PREFIX,
  PROTOCOL_VERSION,
  SUBPROTOCOL,
} from '../board/boardProtocol.js';
import { firstWindow } from '../client/boardQuery.js';
import { earlySocketScript } from '../client/earlySocket.js';
import { cachedBrowserBundle } from './browserBundle.js';
import { PAGE_CSS } from './page/styles.js';

/** A failed page build; `cause` holds esbuild's error. */
export class PageBundleError extends Error {
  override readonly name = 'PageBundleError';
  readonly code = 'UI_PAGE_BUNDLE';
}

/** The bundled page script (cached; a failed build is not cached, so a retry rebuilds). */
export const pageScript = cachedBrowserBundle(
  new URL('./page/board.tsx', import.meta.url),
  (cause) => new PageBundleError('bundling the board page failed', { cause }),
);

/** The admin dashboard's chart engine, uPlot, bundled on its own (page/chartEngine.ts). */
export const chartEngineScript = cachedBrowserBundle(
  new URL('./page/chartEngine.ts', import.meta.url),
  (cause) => new PageBundleError('bundling the chart engine failed', { cause }),
);

/**
 * uPlot's own stylesheet (its chart's layers are positioned by it), from the
 * installed package, read once at load, inlined next to the page's.
 */
const UPLOT_CSS = readFileSync(
  createRequire(import.meta.url).resolve('uplot/dist/uPlot.min.css'),
  'utf8',
);

/** Opens the board's socket before the page's script has loaded (src/client/earlySocket.ts). */
const EARLY_SOCKET_JS = earlySocketScript({
  subprotocol: SUBPROTOCOL,
  bearerPrefix: BEARER_SUBPROTOCOL_PREFIX,
  version: PROTOCOL_VERSION,
  window: firstWindow(),
});

/**
 * The page's Content-Security-Policy: scripts from the server only, and the
 * one inline script, by its hash.
 */
export const PAGE_CSP = [
  "default-src 'self'",
  `script-src 'self' 'sha256-${createHash('sha256').update(EARLY_SOCKET_JS).digest('base64')}'`,
  "style-src 'self' 'unsafe-inline'",
  "connect-src 'self' ws: wss:",
].join('; ');

/** The page's HTML. The token comes from the URL fragment, never sent to the server in a URL. */
export const PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>roundtable board</title>
<script>${EARLY_SOCKET_JS}</script>
<style>${UPLOT_CSS}${PAGE_CSS}</style>
</head>
<body>
<div id="app">connecting</div>
<script type="module" src="/board.js"></script>
</body>
</html>
`;
