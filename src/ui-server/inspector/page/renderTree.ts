/// <reference lib="dom" />
/**
 * The supervision tree as nested lists: supervisors, their children (with
 * restart counts and the last exit reason), and the actors each child
 * invoked. Every row carries data attributes the browser test reads.
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

function row(
  label: string,
  kind: string,
  status: string,
  sessionId: string | null,
  selected: string | null,
): HTMLDivElement {
  const div = document.createElement('div');
  div.className = `node${sessionId !== null && sessionId === selected ? ' selected' : ''}`;
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
  return div;
}

export function renderTree(
  view: TreeView,
  selected: string | null,
  onPick: (pick: Pick) => void,
): HTMLElement {
  const byParent = new Map<string, ActorSummary[]>();
  const byId = new Map<string, ActorSummary>();
  for (const a of view.actors) {
    byId.set(a.sessionId, a);
    if (a.parentId !== null) byParent.set(a.parentId, [...(byParent.get(a.parentId) ?? []), a]);
  }
  const shown = new Set<string>();

  const invoked = (parent: string): HTMLUListElement | null => {
    const kids = (byParent.get(parent) ?? []).filter((a) => a.status === 'active');
    if (kids.length === 0) return null;
    const ul = document.createElement('ul');
    for (const a of kids) {
      shown.add(a.sessionId);
      const li = document.createElement('li');
      li.dataset.session = a.sessionId;
      const r = row(
        a.id,
        a.machine ? 'invoked machine' : 'invoked',
        a.status,
        a.sessionId,
        selected,
      );
      r.addEventListener('click', (e) => {
        e.stopPropagation();
        onPick({ sessionId: a.sessionId, path: null });
      });
      li.append(r);
      const sub = invoked(a.sessionId);
      if (sub) li.append(sub);
      ul.append(li);
    }
    return ul;
  };

  const child = (supSession: string, supId: string, c: ChildNode): HTMLLIElement => {
    const li = document.createElement('li');
    li.dataset.child = `${supId}/${c.id}`;
    li.dataset.restarts = String(c.restartCount);
    li.dataset.status = c.status;
    if (c.sessionId) li.dataset.session = c.sessionId;
    const nested = c.sessionId ? view.tree.supervisors[c.sessionId] : undefined;
    if (nested) {
      li.append(supervisor(nested.sessionId, c.restartCount, `${supSession}/${c.id}`));
      return li;
    }
    const actor = c.sessionId ? byId.get(c.sessionId) : undefined;
    const r = row(c.id, actor?.machine ? 'machine' : 'worker', c.status, c.sessionId, selected);
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
    if (c.sessionId) {
      const sid = c.sessionId;
      shown.add(sid);
      r.addEventListener('click', () => onPick({ sessionId: sid, path: `${supSession}/${c.id}` }));
      const sub = invoked(sid);
      li.append(r);
      if (sub) li.append(sub);
    } else li.append(r);
    return li;
  };

  /** `path`: set for a nested supervisor (its parent can exit and restart it). */
  const supervisor = (sessionId: string, restarts = 0, path: string | null = null): HTMLElement => {
    const s = view.tree.supervisors[sessionId]!;
    shown.add(sessionId);
    const wrap = document.createElement('div');
    wrap.dataset.supervisor = s.id;
    const status =
      s.intensityReachedAt !== null && s.status === 'shutdown' ? 'shutdown: intensity' : s.status;
    const r = row(s.id, 'supervisor', status, sessionId, selected);
    if (restarts > 0) {
      const n = document.createElement('span');
      n.className = 'restarts';
      n.textContent = `↻ ${restarts}`;
      r.append(n);
    }
    r.addEventListener('click', () => onPick({ sessionId, path }));
    wrap.append(r);
    const ul = document.createElement('ul');
    for (const c of s.children) ul.append(child(sessionId, s.id, c));
    wrap.append(ul);
    return wrap;
  };

  const root = document.createElement('ul');
  root.className = 'tree';
  for (const id of view.roots) {
    const li = document.createElement('li');
    li.append(supervisor(id));
    root.append(li);
  }
  // Live actors outside any supervisor (started on their own).
  const loose = view.actors.filter(
    (a) => a.parentId === null && a.status === 'active' && !shown.has(a.sessionId) && !a.supervisor,
  );
  for (const a of loose) {
    const li = document.createElement('li');
    li.dataset.session = a.sessionId;
    const r = row(a.id, 'unsupervised', a.status, a.sessionId, selected);
    r.addEventListener('click', () => onPick({ sessionId: a.sessionId, path: null }));
    li.append(r);
    const sub = invoked(a.sessionId);
    if (sub) li.append(sub);
    root.append(li);
  }
  return root;
}
