/// <reference lib="dom" />
/**
 * The inspector page's script (bundled by esbuild at server start): the
 * page's state (the tree, the selection, its chart and events, the
 * timeline) and what draws it. Its parts have files of their own: the token
 * (inspectToken.ts), the connection (inspectSocket.ts), the exit request
 * (exitRequest.ts), the chart panel (chartPanel.ts) and the rows and
 * charts (render*.ts).
 */

import {
  type ActorJob,
  type ActorSummary,
  boardJobHref,
  type InspectServerFrame,
} from '../inspectorProtocol.js';
import type { TimelineEntry } from '../timeline.js';
import { drawChartPanel } from './chartPanel.js';
import { requestExit } from './exitRequest.js';
import { connectInspector } from './inspectSocket.js';
import { readInspectToken } from './inspectToken.js';
import { highlight, loadElk } from './renderChart.js';
import { type EventLine, eventRows, keepEvents } from './renderEvents.js';
import { renderMonitors } from './renderMonitors.js';
import { filterTimeline, timelineRows } from './renderTimeline.js';
import { type Pick, renderTree, type TreeView } from './renderTree.js';
import { findRunner, parseRunnerLink, type RunnerLink } from './runnerLink.js';
import { makeCurrent, treeKeys } from './treeKeys.js';

type Frame<T extends InspectServerFrame['type']> = Extract<InspectServerFrame, { type: T }>;

/** The runner the board's job page linked to (`#runner=<sessionId>`), until it is selected. */
let wanted: RunnerLink | null = parseRunnerLink(location.hash);
/** The link that was followed: its task links the runner back to its job if the tree does not know it. */
let followed: RunnerLink | null = null;

function readToken(): string | null {
  const { token, hash } = readInspectToken(location.hash, sessionStorage);
  // The token leaves the address bar; a runner link stays.
  if (hash !== null) history.replaceState(null, '', `${location.pathname}${hash}`);
  return token;
}

/** An element of inspector.html: every id asked for here is in the page. */
const $ = (id: string) => document.getElementById(id)!;
const status = $('status');

let view: TreeView | null = null;
let actorsById = new Map<string, ActorSummary>();
/** The "N ended" folds the user opened, by key. */
const openFolds = new Set<string>();
let selected: string | null = null;
/** `supervisorSessionId/childId`: lets the selection follow a child across restarts. */
let selectedPath: string | null = null;
let chart: SVGSVGElement | null = null;
/** The latest active states, for a chart still being laid out when they arrive. */
let active: string[] = [];
let events: EventLine[] = [];
let timeline: TimelineEntry[] = [];
let timelineMax = 500;
let socket: WebSocket | null = null;

const jobOf = (sessionId: string): ActorJob | null => actorsById.get(sessionId)?.job ?? null;

function select(sessionId: string | null, path: string | null): void {
  // Following the same child to its next incarnation keeps the exit's result shown.
  if (path === null || path !== selectedPath) $('exit-result').textContent = '';
  selected = sessionId;
  selectedPath = path;
  chart = null;
  active = [];
  events = [];
  $('chart').replaceChildren();
  drawJob();
  $('events').replaceChildren();
  $('context').textContent = '';
  $('actor-title').textContent = sessionId === null ? 'Select an actor' : sessionId;
  // Only a supervised child can be exited: its supervisor restarts it.
  $('actions').hidden = path === null;
  socket?.send(JSON.stringify({ type: 'select', sessionId }));
  drawTree();
}

function onPick(p: Pick): void {
  wanted = null;
  select(p.sessionId, p.path);
}

/** Selects the linked runner once the tree holds it (opening its fold if it ended). */
function followLink(): void {
  if (!view || wanted === null) return;
  const place = findRunner(view.tree, wanted.runner);
  if (place === null) {
    document.body.dataset.runnerLink = 'absent';
    if (selected === null) {
      $('actor-title').textContent =
        `runner ${wanted.runner} is not in this node's tree: it may run on another node, or have aged out`;
    }
    return;
  }
  followed = wanted;
  wanted = null;
  if (place.fold !== null) openFolds.add(place.fold);
  select(place.sessionId, place.path);
  document.body.dataset.runnerLink = 'selected';
  document
    .querySelector('#tree li[aria-selected="true"]')
    ?.scrollIntoView({ block: 'nearest', inline: 'nearest' });
}

/** The selected actor's job, linked to its page on the board. */
function drawJob(): void {
  const job = selected === null ? null : jobOf(selected);
  const link = $('job-link') as HTMLAnchorElement;
  const linkedTask =
    followed !== null && selected !== null && actorsById.get(selected)?.id === followed.runner
      ? followed.task
      : null;
  const taskId = job?.taskId ?? linkedTask;
  link.hidden = taskId == null;
  if (job?.taskId != null) {
    link.href = boardJobHref(job.taskId);
    link.textContent = `job “${job.title ?? job.taskId}” of ${job.userId} on the board`;
  } else if (taskId != null) {
    link.href = boardJobHref(taskId);
    link.textContent = `job ${taskId} on the board`;
  }
}

function drawTree(): void {
  if (!view) return;
  const host = $('tree');
  // Redraws keep the focused row focused (by key), so the keyboard is not lost.
  const focusedKey = (document.activeElement as HTMLElement | null)?.closest<HTMLElement>(
    '#tree li[role="treeitem"]',
  )?.dataset.key;
  const tree = renderTree(view, {
    selected,
    open: openFolds,
    onPick,
    onToggle: (key) => {
      if (!openFolds.delete(key)) openFolds.add(key);
      drawTree();
    },
  });
  host.replaceChildren(tree);
  const again =
    focusedKey === undefined
      ? null
      : tree.querySelector<HTMLLIElement>(`li[data-key="${CSS.escape(focusedKey)}"]`);
  makeCurrent(tree, again, again !== null);
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
  out.className = 'muted';
  out.textContent = 'exiting…';
  try {
    out.textContent = `exited: ${await requestExit(token, selectedPath, picked)}`;
  } catch (err) {
    out.className = 'alarm';
    out.textContent = (err as Error).message;
  }
}

function followRestart(): void {
  const path = selectedPath;
  if (!view || path === null) return;
  const cut = path.lastIndexOf('/');
  const sup = view.tree.supervisors[path.slice(0, cut)];
  const child = sup?.children.find((c) => c.id === path.slice(cut + 1));
  if (child?.sessionId && child.sessionId !== selected && child.status === 'running') {
    select(child.sessionId, path);
  }
}

function onActor(f: Frame<'actor'>): void {
  if (f.sessionId !== selected) return;
  document.body.dataset.selectedStatus = f.status;
  const job = jobOf(f.sessionId);
  const name = job?.title ? `${job.title} (${job.userId}) · ${f.id}` : f.id;
  $('actor-title').textContent = `${name} · ${f.sessionId} · ${f.status}`;
  drawJob();
  active = f.active;
  if (f.graph !== undefined) {
    chart = null;
    const forSession = f.sessionId;
    drawChartPanel($('chart'), f.graph, {
      current: () => selected === forSession,
      active: () => active,
      drawn: (svg) => {
        chart = svg;
      },
    });
  }
  if (chart) highlight(chart, f.active);
  const shown: Record<string, unknown> = { value: f.value, context: f.context };
  if (f.output !== null) shown.output = f.output;
  if (f.error !== null) shown.error = f.error;
  $('context').textContent = JSON.stringify(shown, null, 2);
}

function onEvents(f: Frame<'events'>): void {
  if (f.sessionId !== selected) return;
  events = keepEvents(events, f);
  $('events').replaceChildren(...eventRows(events));
}

function onTimeline(f: Frame<'timeline'>): void {
  timeline = (f.reset ? f.entries : [...timeline, ...f.entries]).slice(-timelineMax);
  drawTimeline();
}

function drawTimeline(): void {
  const shown = filterTimeline(
    timeline,
    {
      actor: ($('tl-actor') as HTMLInputElement).value,
      kind: ($('tl-kind') as HTMLSelectElement).value,
      alarmsOnly: ($('tl-alarms') as HTMLInputElement).checked,
    },
    jobOf,
  );
  $('timeline').replaceChildren(...timelineRows(shown, jobOf));
  $('tl-count').textContent =
    shown.length === timeline.length
      ? `${timeline.length}`
      : `${shown.length} of ${timeline.length}`;
}

function onFrame(f: InspectServerFrame): void {
  switch (f.type) {
    case 'hello':
      timelineMax = f.limits.timelineSize;
      break;
    case 'tree':
      view = { tree: f.tree, roots: f.roots, actors: f.actors };
      actorsById = new Map(f.actors.map((a) => [a.sessionId, a]));
      drawTree();
      drawJob();
      followRestart();
      followLink();
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
}

function connect(token: string): void {
  connectInspector(token, {
    created: (ws) => {
      socket = ws;
    },
    open: (ws) => {
      status.textContent = 'live';
      document.body.dataset.connection = 'live';
      if (selected !== null) ws.send(JSON.stringify({ type: 'select', sessionId: selected }));
    },
    frame: onFrame,
    closed: (code, retryInMs) => {
      document.body.dataset.connection = 'closed';
      socket = null;
      status.textContent = `disconnected (${code}); retrying in ${Math.round(retryInMs / 1000)} s`;
    },
  });
}

treeKeys($('tree'));
addEventListener('hashchange', () => {
  wanted = parseRunnerLink(location.hash);
  followLink();
});
for (const id of ['tl-actor', 'tl-kind', 'tl-alarms'])
  $(id).addEventListener('input', drawTimeline);

const token = readToken();
if (token === null) status.textContent = 'no token: open /inspect#token=<admin token>';
else {
  $('exit').addEventListener('click', () => void exitSelected(token));
  connect(token);
  // The layout engine loads after the first paint, before a chart is asked for.
  setTimeout(() => loadElk().catch(() => {}), 0);
}
