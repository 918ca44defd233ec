/// <reference lib="dom" />
/**
 * The inspector page's script (bundled by esbuild at server start). The
 * admin token comes from the URL fragment (`/inspect#token=...`), never sent
 * in a URL, and is kept in sessionStorage for reloads.
 */
import {
  BEARER_SUBPROTOCOL_PREFIX,
  INSPECT_EXIT_PATH,
  INSPECT_SUBPROTOCOL,
  INSPECT_WS_PATH,
  type InspectServerFrame,
} from '../inspectorProtocol.js';
import type { TimelineEntry } from '../timeline.js';
import { highlight, renderChart } from './renderChart.js';
import { renderMonitors } from './renderMonitors.js';
import { type Pick, renderTree, type TreeView } from './renderTree.js';

type Frame<T extends InspectServerFrame['type']> = Extract<InspectServerFrame, { type: T }>;

function readToken(): string | null {
  const fromHash = new URLSearchParams(location.hash.slice(1)).get('token');
  if (fromHash) {
    sessionStorage.setItem('roundtable.inspect.token', fromHash);
    history.replaceState(null, '', location.pathname);
    return fromHash;
  }
  return sessionStorage.getItem('roundtable.inspect.token');
}

const $ = (id: string) => document.getElementById(id)!;
const status = $('status');

let view: TreeView | null = null;
let selected: string | null = null;
/** `supervisorSessionId/childId`: lets the selection follow a child across restarts. */
let selectedPath: string | null = null;
let chart: SVGSVGElement | null = null;
let events: Frame<'events'>['events'] = [];
let timeline: TimelineEntry[] = [];
let timelineMax = 500;
let socket: WebSocket | null = null;

const time = (at: number) => new Date(at).toISOString().slice(11, 23);

function select(sessionId: string | null, path: string | null): void {
  // Following the same child to its next incarnation keeps the exit's result shown.
  if (path === null || path !== selectedPath) $('exit-result').textContent = '';
  selected = sessionId;
  selectedPath = path;
  chart = null;
  events = [];
  $('chart').replaceChildren();
  $('events').replaceChildren();
  $('context').textContent = '';
  $('actor-title').textContent = sessionId === null ? 'Select an actor' : sessionId;
  // Only a supervised child can be exited: its supervisor restarts it.
  $('actions').hidden = path === null;
  socket?.send(JSON.stringify({ type: 'select', sessionId }));
  drawTree();
}

function onPick(p: Pick): void {
  select(p.sessionId, p.path);
}

function drawTree(): void {
  if (!view) return;
  $('tree').replaceChildren(renderTree(view, selected, onPick));
  const list = renderMonitors(view);
  $('monitors').textContent =
    list.length === 0 ? 'none' : `${list.length} live (watcher → target; dashed: watcher inferred)`;
  $('monitor-list').replaceChildren(...list);
}

/** Exits the selected child through the admin API (its supervisor then applies its policy). */
async function exitSelected(token: string): Promise<void> {
  const out = $('exit-result');
  if (selectedPath === null) return;
  const picked = ($('exit-reason') as HTMLSelectElement).value;
  const reason = picked === 'error' ? { error: 'exited from the inspector' } : picked;
  out.className = 'muted';
  out.textContent = 'exiting…';
  try {
    const res = await fetch(INSPECT_EXIT_PATH, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ path: selectedPath, reason }),
    });
    const body = (await res.json()) as {
      reason?: string;
      error?: { code: string; message: string };
    };
    if (!res.ok) throw new Error(`${body.error?.code ?? res.status}: ${body.error?.message ?? ''}`);
    out.textContent = `exited: ${body.reason}`;
  } catch (err) {
    out.className = 'alarm';
    out.textContent = (err as Error).message;
  }
}

function followRestart(): void {
  if (!view || selectedPath === null) return;
  const cut = selectedPath.lastIndexOf('/');
  const sup = view.tree.supervisors[selectedPath.slice(0, cut)];
  const child = sup?.children.find((c) => c.id === selectedPath!.slice(cut + 1));
  if (child?.sessionId && child.sessionId !== selected && child.status === 'running') {
    select(child.sessionId, selectedPath);
  }
}

function onActor(f: Frame<'actor'>): void {
  if (f.sessionId !== selected) return;
  document.body.dataset.selectedStatus = f.status;
  $('actor-title').textContent = `${f.id} · ${f.sessionId} · ${f.status}`;
  if (f.graph !== undefined) {
    if (f.graph === null) {
      chart = null;
      const p = document.createElement('p');
      p.className = 'muted';
      p.textContent = 'not a state machine: no statechart to draw';
      $('chart').replaceChildren(p);
    } else {
      chart = renderChart(f.graph).svg;
      $('chart').replaceChildren(chart);
    }
  }
  if (chart) highlight(chart, f.active);
  const shown: Record<string, unknown> = { value: f.value, context: f.context };
  if (f.output !== null) shown.output = f.output;
  if (f.error !== null) shown.error = f.error;
  $('context').textContent = JSON.stringify(shown, null, 2);
}

function onEvents(f: Frame<'events'>): void {
  if (f.sessionId !== selected) return;
  events = (f.reset ? f.events : [...events, ...f.events]).slice(-50);
  const rows = [...events].reverse().map((e) => {
    const tr = document.createElement('tr');
    const cells = [
      time(e.at),
      e.type,
      e.sourceId ? `from ${e.sourceId}` : '',
      JSON.stringify(e.event),
    ];
    for (const c of cells) {
      const td = document.createElement('td');
      td.textContent = c;
      tr.append(td);
    }
    return tr;
  });
  $('events').replaceChildren(...rows);
}

function onTimeline(f: Frame<'timeline'>): void {
  timeline = (f.reset ? f.entries : [...timeline, ...f.entries]).slice(-timelineMax);
  const rows = [...timeline].reverse().map((e) => {
    const tr = document.createElement('tr');
    tr.dataset.kind = e.kind;
    if (e.alarm) tr.className = 'alarm';
    for (const c of [time(e.at), e.kind, e.subject, e.text]) {
      const td = document.createElement('td');
      td.textContent = c;
      tr.append(td);
    }
    return tr;
  });
  $('timeline').replaceChildren(...rows);
}

function connect(token: string, attempt: number): void {
  const url = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}${INSPECT_WS_PATH}`;
  const ws = new WebSocket(url, [INSPECT_SUBPROTOCOL, `${BEARER_SUBPROTOCOL_PREFIX}${token}`]);
  socket = ws;
  ws.onopen = () => {
    attempt = 0;
    status.textContent = 'live';
    document.body.dataset.connection = 'live';
    if (selected !== null) ws.send(JSON.stringify({ type: 'select', sessionId: selected }));
  };
  ws.onmessage = (m) => {
    const f = JSON.parse(String(m.data)) as InspectServerFrame;
    switch (f.type) {
      case 'hello':
        timelineMax = f.limits.timelineSize;
        break;
      case 'tree':
        view = { tree: f.tree, roots: f.roots, actors: f.actors };
        drawTree();
        followRestart();
        break;
      case 'actor':
        onActor(f);
        break;
      case 'events':
        onEvents(f);
        break;
      case 'timeline':
        onTimeline(f);
        break;
      case 'gone':
        if (f.sessionId === selected) $('actor-title').textContent = `${f.sessionId} · gone`;
        break;
      case 'error':
        status.textContent = `error: ${f.code}: ${f.message}`;
        break;
    }
  };
  ws.onclose = (e) => {
    document.body.dataset.connection = 'closed';
    socket = null;
    // 1006 right away is how a browser reports a refused upgrade (401/403).
    const delay = Math.min(30_000, 500 * 2 ** attempt);
    status.textContent = `disconnected (${e.code}); retrying in ${Math.round(delay / 1000)} s`;
    setTimeout(() => connect(token, attempt + 1), delay);
  };
}

const token = readToken();
if (token === null) status.textContent = 'no token: open /inspect#token=<admin token>';
else {
  $('exit').addEventListener('click', () => void exitSelected(token));
  connect(token, 0);
}
