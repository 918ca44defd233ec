/// <reference lib="dom" />
/**
 * The supervision tree as an ARIA tree of nested lists: supervisors, their
 * children (restart counts, the last exit reason; a TaskRunner named by its
 * job's title and user), and the actors each child invoked. Live children
 * come first; ended ones fold into one "N ended" item, closed until opened.
 * Every row carries data attributes the browser tests read; `data-key`
 * survives redraws, so focus and open folds are kept across tree frames.
 */
import type { ActorSummary } from '../inspectorProtocol.js';
import type { ChildNode, InspectorTree } from '../inspectorTree.js';

export interface TreeView {
  tree: InspectorTree;
  roots: string[];
  actors: ActorSummary[];
}

/** A click on a row: the actor, and (for supervised children) the path that survives restarts. */
export type Pick = { sessionId: string; path: string | null };

export interface TreeState {
  selected: string | null;
  /** Keys of the "N ended" folds the user opened. */
  open: ReadonlySet<string>;
  onPick(pick: Pick): void;
  onToggle(key: string): void;
}

function row(label: string, kind: string, status: string, detail: string | null): HTMLDivElement {
  const div = document.createElement('div');
  div.className = 'node';
  const name = document.createElement('span');
  name.className = 'name';
  name.textContent = label;
  const k = document.createElement('span');
  k.className = 'kind';
  k.textContent = kind;
  const st = document.createElement('span');
  st.className = `status st-${status.split(':')[0]}`;
  st.textContent = status;
  div.append(name, k, st);
  if (detail !== null) {
    const d = document.createElement('span');
    d.className = 'detail';
    d.textContent = detail;
    div.append(d);
  }
  return div;
}

function item(key: string): HTMLLIElement {
  const li = document.createElement('li');
  li.setAttribute('role', 'treeitem');
  li.tabIndex = -1;
  li.dataset.key = key;
  return li;
}

function group(): HTMLUListElement {
  const ul = document.createElement('ul');
  ul.setAttribute('role', 'group');
  return ul;
}

/** Live (running, restarting) before ended, each in the supervisor's order. */
const isEnded = (c: ChildNode) => c.status === 'stopped';

export function renderTree(view: TreeView, s: TreeState): HTMLElement {
  const byParent = new Map<string, ActorSummary[]>();
  const byId = new Map<string, ActorSummary>();
  for (const a of view.actors) {
    byId.set(a.sessionId, a);
    if (a.parentId !== null) byParent.set(a.parentId, [...(byParent.get(a.parentId) ?? []), a]);
  }
  const shown = new Set<string>();

  const pickable = (li: HTMLLIElement, r: HTMLDivElement, pick: Pick) => {
    if (pick.sessionId === s.selected) li.setAttribute('aria-selected', 'true');
    else li.setAttribute('aria-selected', 'false');
    li.dataset.pick = JSON.stringify(pick);
    r.addEventListener('click', (e) => {
      e.stopPropagation();
      s.onPick(pick);
    });
  };

  const invoked = (parent: string, li: HTMLLIElement): void => {
    const kids = (byParent.get(parent) ?? []).filter((a) => a.status === 'active');
    if (kids.length === 0) return;
    const ul = group();
    for (const a of kids) {
      shown.add(a.sessionId);
      const k = item(`invoked:${a.sessionId}`);
      k.dataset.session = a.sessionId;
      const r = row(a.id, a.machine ? 'invoked machine' : 'invoked', a.status, null);
      pickable(k, r, { sessionId: a.sessionId, path: null });
      k.append(r);
      invoked(a.sessionId, k);
      ul.append(k);
    }
    li.setAttribute('aria-expanded', 'true');
    li.append(ul);
  };

  const child = (supSession: string, supId: string, c: ChildNode): HTMLLIElement => {
    const nested = c.sessionId ? view.tree.supervisors[c.sessionId] : undefined;
    const li = nested
      ? supervisor(nested.sessionId, c.restartCount, `${supSession}/${c.id}`)
      : item(`child:${supSession}/${c.id}`);
    li.dataset.child = `${supId}/${c.id}`;
    li.dataset.restarts = String(c.restartCount);
    li.dataset.status = c.status;
    if (c.sessionId) li.dataset.session = c.sessionId;
    if (nested) return li;
    const actor = c.sessionId ? byId.get(c.sessionId) : undefined;
    const job = actor?.job ?? null;
    const label = job?.title ?? c.id;
    // A runner's own id is its session's: shown small next to its job.
    const detail = job === null ? null : `${job.userId}${job.title === null ? '' : ` · ${c.id}`}`;
    const r = row(label, actor?.machine ? 'machine' : 'worker', c.status, detail);
    if (job?.taskId) li.dataset.task = job.taskId;
    if (c.restartCount > 0) {
      const n = document.createElement('span');
      n.className = 'restarts';
      n.textContent = `↻ ${c.restartCount}`;
      r.append(n);
    }
    const last = c.exits[c.exits.length - 1];
    if (last) {
      const x = document.createElement('span');
      x.className = `exit${last.clean ? ' muted' : ''}`;
      x.textContent = `last exit: ${last.reason}`;
      x.title = c.exits.map((e) => `${new Date(e.at).toISOString()} ${e.reason}`).join('\n');
      r.append(x);
    }
    li.append(r);
    if (c.sessionId) {
      const sid = c.sessionId;
      shown.add(sid);
      pickable(li, r, { sessionId: sid, path: `${supSession}/${c.id}` });
      invoked(sid, li);
    }
    return li;
  };

  /** `path`: set for a nested supervisor (its parent can exit and restart it). */
  const supervisor = (
    sessionId: string,
    restarts = 0,
    path: string | null = null,
  ): HTMLLIElement => {
    // Called for the roots and for nested supervisors found in the tree: both are its keys.
    const sup = view.tree.supervisors[sessionId]!;
    shown.add(sessionId);
    const li = item(`sup:${path ?? sup.id}`);
    li.dataset.supervisor = sup.id;
    const status =
      sup.intensityReachedAt !== null && sup.status === 'shutdown'
        ? 'shutdown: intensity'
        : sup.status;
    const live = sup.children.filter((c) => !isEnded(c));
    const ended = sup.children.filter(isEnded);
    const kind = ended.length > 0 ? `supervisor · ${live.length} live` : 'supervisor';
    const r = row(sup.id, kind, status, null);
    if (restarts > 0) {
      const n = document.createElement('span');
      n.className = 'restarts';
      n.textContent = `↻ ${restarts}`;
      r.append(n);
    }
    pickable(li, r, { sessionId, path });
    li.append(r);
    li.setAttribute('aria-expanded', 'true');
    const ul = group();
    for (const c of live) ul.append(child(sessionId, sup.id, c));
    if (ended.length > 0) {
      const key = `ended:${sessionId}`;
      const fold = item(key);
      fold.dataset.ended = String(ended.length);
      const open = s.open.has(key);
      fold.setAttribute('aria-expanded', String(open));
      const fr = row(`${ended.length} ended`, open ? '▾' : '▸', '', null);
      fr.classList.add('fold');
      fr.addEventListener('click', (e) => {
        e.stopPropagation();
        s.onToggle(key);
      });
      fold.append(fr);
      if (open) {
        const inner = group();
        for (const c of ended) inner.append(child(sessionId, sup.id, c));
        fold.append(inner);
      }
      ul.append(fold);
    }
    li.append(ul);
    return li;
  };

  const root = document.createElement('ul');
  root.className = 'tree';
  root.setAttribute('role', 'tree');
  root.setAttribute('aria-label', 'supervision tree');
  for (const id of view.roots) root.append(supervisor(id));
  // Live actors outside any supervisor (started on their own).
  const loose = view.actors.filter(
    (a) => a.parentId === null && a.status === 'active' && !shown.has(a.sessionId) && !a.supervisor,
  );
  for (const a of loose) {
    const li = item(`loose:${a.sessionId}`);
    li.dataset.session = a.sessionId;
    const r = row(a.id, 'unsupervised', a.status, null);
    pickable(li, r, { sessionId: a.sessionId, path: null });
    li.append(r);
    invoked(a.sessionId, li);
    root.append(li);
  }
  return root;
}
