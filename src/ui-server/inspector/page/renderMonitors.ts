/// <reference lib="dom" />
/**
 * The live monitors as a list of edges, watcher → target, named by actor id
 * where the tree knows it. Each row carries data attributes the browser
 * test reads; an inferred watcher is drawn dashed.
 */
import type { TreeView } from './renderTree.js';

export function renderMonitors(view: TreeView): HTMLLIElement[] {
  const names = new Map(view.actors.map((a) => [a.sessionId, a.id]));
  const name = (sessionId: string | null, fallback: string) =>
    sessionId === null ? fallback : `${names.get(sessionId) ?? '?'} (${sessionId})`;
  return Object.values(view.tree.monitors ?? {}).map((m) => {
    const li = document.createElement('li');
    li.dataset.monitor = m.ref;
    if (m.watcherSessionId !== null) li.dataset.watcher = m.watcherSessionId;
    if (m.targetSessionId !== null) li.dataset.target = m.targetSessionId;
    if (m.inferred) {
      li.className = 'inferred';
      li.title = 'watcher inferred from the inspection stream';
    }
    const arrow = document.createElement('span');
    arrow.className = 'arrow';
    arrow.textContent = `${name(m.watcherSessionId, 'a callback')} → ${name(m.targetSessionId, m.targetId)}`;
    const ref = document.createElement('span');
    ref.className = 'muted';
    ref.textContent = ` ${m.ref}`;
    li.append(arrow, ref);
    return li;
  });
}
