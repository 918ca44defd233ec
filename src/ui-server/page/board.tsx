/// <reference lib="dom" />
/**
 * The board page's script (bundled by esbuild at server start). The bearer
 * token comes from the URL fragment (`/#token=...`), which browsers never send
 * to the server, and is kept in sessionStorage for reloads.
 */
import { render } from 'preact';
import { createBoardApi } from '../../client/boardApi.js';
import { connectBoard } from '../../client/boardClient.js';
import { firstWindow } from '../../client/boardQuery.js';
import { TOKEN_STORAGE_KEY, takeEarlySocket } from '../../client/earlySocket.js';
import { App } from './App.js';
import { renderOnFirstFrame } from './firstRender.js';
import { installKeyboard } from './keyboard.js';

function readToken(): string | null {
  const fromHash = new URLSearchParams(location.hash.slice(1)).get('token');
  if (fromHash) {
    sessionStorage.setItem(TOKEN_STORAGE_KEY, fromHash);
    history.replaceState(null, '', location.pathname);
    return fromHash;
  }
  return sessionStorage.getItem(TOKEN_STORAGE_KEY);
}

/** The longest the first render waits for the early socket's snapshot (firstRender.ts). */
const FIRST_FRAME_WAIT_MS = 500;

const root = document.getElementById('app')!;
const token = readToken();
if (token === null) {
  root.textContent = 'no token: open /#token=<your token>';
} else {
  const api = createBoardApi({ baseUrl: '', token });
  const client = connectBoard({
    url: `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/ws`,
    token,
    // What the board's columns ask for first, so the first paint needs one snapshot.
    window: firstWindow(),
    // The page's inline script opened the socket and subscribed while this loaded.
    early: takeEarlySocket(token),
  });
  installKeyboard();
  renderOnFirstFrame(client.store, FIRST_FRAME_WAIT_MS, () => {
    // The shell's placeholder text goes before the first render.
    root.textContent = '';
    render(<App client={client} api={api} />, root);
  });
}
