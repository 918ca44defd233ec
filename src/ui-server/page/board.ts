/// <reference lib="dom" />
/**
 * The board page's script (bundled by esbuild at server start). The bearer
 * token comes from the URL fragment (`/#token=...`), which browsers never send
 * to the server, and is kept in sessionStorage for reloads.
 */
import { createBoardApi } from '../../client/boardApi.js';
import { connectBoard } from '../../client/boardClient.js';
import { type BoardContext, cardsInColumn } from '../../client/boardStore.js';
import type { Column } from '../boardPort.js';
import { renderCard } from './renderCard.js';

const COLUMNS: Column[] = ['queued', 'running', 'done', 'failed'];

function readToken(): string | null {
  const fromHash = new URLSearchParams(location.hash.slice(1)).get('token');
  if (fromHash) {
    sessionStorage.setItem('roundtable.token', fromHash);
    history.replaceState(null, '', location.pathname);
    return fromHash;
  }
  return sessionStorage.getItem('roundtable.token');
}

const status = document.getElementById('status')!;
const token = readToken();
if (token === null) {
  status.textContent = 'no token: open /#token=<your token>';
} else {
  const api = createBoardApi({ baseUrl: '', token });
  const client = connectBoard({
    url: `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/ws`,
    token,
  });
  const showError = (err: unknown) => {
    status.textContent = `error: ${(err as Error).message}`;
  };
  const onRetry = (taskId: string) => void api.retry(taskId).catch(showError);
  // The node's container engine: while it is down, starts are held (sessions stay queued).
  let engine = 'available';
  const checkEngine = () =>
    void fetch('/healthz')
      .then((r) => r.json() as Promise<{ engine?: string }>)
      .then((h) => {
        engine = h.engine ?? 'available';
      })
      .catch(() => undefined);
  checkEngine();
  setInterval(checkEngine, 5000);
  const render = (ctx: BoardContext) => {
    const now = Date.now();
    const held = engine === 'unavailable' ? ' · container engine unavailable: starts are held' : '';
    status.textContent = `${ctx.connection}${ctx.userId ? ` as ${ctx.userId}` : ''} · seq ${ctx.seq}${held}`;
    document.body.dataset.engine = engine;
    document.body.dataset.connection = ctx.connection;
    for (const column of COLUMNS) {
      const holder = document.querySelector(`section[data-column="${column}"] .cards`)!;
      holder.replaceChildren(...cardsInColumn(ctx, column).map((c) => renderCard(c, now, onRetry)));
    }
  };
  client.store.subscribe((snap) => render(snap.context));
  render(client.store.getSnapshot().context);
  // Waiting and running times advance without any message from the server.
  setInterval(() => render(client.store.getSnapshot().context), 1000);

  const form = document.getElementById('create') as HTMLFormElement;
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const data = new FormData(form);
    const command = String(data.get('command') ?? '')
      .split(' ')
      .filter((a) => a !== '');
    api
      .createTask({ title: String(data.get('title')), image: String(data.get('image')), command })
      .then(() => form.reset(), showError);
  });
}
