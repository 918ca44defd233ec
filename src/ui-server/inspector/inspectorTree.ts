/**
 * The supervision tree as the inspector shows it: a pure fold over the
 * supervisors' `roundtable.*` events (as they arrive on the inspection
 * stream), keyed by each supervisor's sessionId. Richer than the
 * supervisor's own `treeReducer`: it keeps start order, recent exits with
 * their time and reason, restart delays and intensity trips.
 */
import type { SupervisorEvent } from '../../supervisor/events.js';
import { describeExitReason, type ExitReason, isCleanExit } from '../../supervisor/exitReason.js';
import type { MonitorMap } from './inspectorMonitors.js';

/** Exits kept per child. */
export const RECENT_EXITS = 5;

/**
 * Stopped children kept per supervisor: a dynamic supervisor's finished
 * TaskRunners would otherwise pile up for the life of the node.
 */
export const STOPPED_CHILDREN = 50;

/** One exit of a child, newest last. */
export interface ExitEntry {
  at: number;
  reason: string;
  clean: boolean;
}

/** A child of a supervisor, across its incarnations. */
export interface ChildNode {
  id: string;
  /** The current (or last) incarnation's XState sessionId. */
  sessionId: string | null;
  status: 'running' | 'restarting' | 'stopped' | 'given_up';
  restartCount: number;
  exits: ExitEntry[];
  /** The delay of the restart in progress, if any. */
  restartDelayMs: number | null;
}

export interface SupervisorNode {
  id: string;
  sessionId: string;
  status: 'running' | 'shutdown';
  /** Why it shut down, once it has. */
  reason: string | null;
  /** When the restart intensity was last exceeded. */
  intensityReachedAt: number | null;
  children: ChildNode[];
}

export interface InspectorTree {
  /** By the supervisor's own sessionId. */
  supervisors: Record<string, SupervisorNode>;
  /** Live monitors by ref (inspectorMonitors.ts). */
  monitors: MonitorMap;
}

export const EMPTY_TREE: InspectorTree = { supervisors: {}, monitors: {} };

function describe(reason: ExitReason): ExitEntry['reason'] {
  return describeExitReason(reason);
}

function updateChild(
  sup: SupervisorNode,
  childId: string,
  f: (c: ChildNode) => ChildNode,
): SupervisorNode {
  const at = sup.children.findIndex((c) => c.id === childId);
  const prev: ChildNode = sup.children[at] ?? {
    id: childId,
    sessionId: null,
    status: 'stopped',
    restartCount: 0,
    exits: [],
    restartDelayMs: null,
  };
  const next = f(prev);
  const children = [...sup.children];
  if (at >= 0) children[at] = next;
  else children.push(next);
  return { ...sup, children };
}

function forgetOldStopped(sup: SupervisorNode): SupervisorNode {
  const stopped = sup.children.filter((c) => c.status === 'stopped');
  if (stopped.length <= STOPPED_CHILDREN) return sup;
  const lastExit = (c: ChildNode) => c.exits[c.exits.length - 1]?.at ?? 0;
  const drop = new Set(
    stopped
      .sort((a, b) => lastExit(a) - lastExit(b))
      .slice(0, stopped.length - STOPPED_CHILDREN)
      .map((c) => c.id),
  );
  return { ...sup, children: sup.children.filter((c) => !drop.has(c.id)) };
}

/** Drops a supervisor and every supervisor below it (a nested one that was replaced). */
function dropSubtree(tree: InspectorTree, sessionId: string): InspectorTree {
  const sup = tree.supervisors[sessionId];
  if (!sup) return tree;
  let supervisors = { ...tree.supervisors };
  delete supervisors[sessionId];
  for (const c of sup.children) {
    if (c.sessionId && supervisors[c.sessionId]) {
      supervisors = dropSubtree({ ...tree, supervisors }, c.sessionId).supervisors;
    }
  }
  return { ...tree, supervisors };
}

/**
 * Applies one event sent to the supervisor whose shell actor has `sessionId`.
 *
 * @example
 * ```ts
 * let t = applySupervisorEvent(EMPTY_TREE, 's:1', { type: 'roundtable.child.started', supervisorId: 'root', childId: 'a', sessionId: 'x:2', restartCount: 0 }, 100)
 * t.supervisors['s:1'].children[0].status // => 'running'
 * t = applySupervisorEvent(t, 's:1', { type: 'roundtable.child.exited', supervisorId: 'root', childId: 'a', reason: { error: new Error('boom') } }, 200)
 * t.supervisors['s:1'].children[0].exits // => [{ at: 200, reason: 'error: boom', clean: false }]
 * t = applySupervisorEvent(t, 's:1', { type: 'roundtable.child.restarting', supervisorId: 'root', childId: 'a', delayMs: 0 }, 200)
 * t = applySupervisorEvent(t, 's:1', { type: 'roundtable.child.started', supervisorId: 'root', childId: 'a', sessionId: 'x:3', restartCount: 1 }, 200)
 * t.supervisors['s:1'].children[0].restartCount // => 1
 * t.supervisors['s:1'].children[0].sessionId // => 'x:3'
 * applySupervisorEvent(t, 's:1', { type: 'roundtable.supervisor.shutdown', supervisorId: 'root', reason: 'shutdown' }, 300).supervisors['s:1'].status // => 'shutdown'
 * ```
 */
export function applySupervisorEvent(
  tree: InspectorTree,
  sessionId: string,
  event: SupervisorEvent,
  at: number,
): InspectorTree {
  let base = tree;
  if (event.type === 'roundtable.child.started') {
    // A nested supervisor that was replaced leaves nothing worth showing.
    const old = tree.supervisors[sessionId]?.children.find((c) => c.id === event.childId);
    if (old?.sessionId && old.sessionId !== event.sessionId)
      base = dropSubtree(tree, old.sessionId);
  }
  const sup: SupervisorNode = base.supervisors[sessionId] ?? {
    id: event.supervisorId,
    sessionId,
    status: 'running',
    reason: null,
    intensityReachedAt: null,
    children: [],
  };
  let next: SupervisorNode;
  switch (event.type) {
    case 'roundtable.child.started':
      next = updateChild(sup, event.childId, (c) => ({
        ...c,
        sessionId: event.sessionId,
        status: 'running',
        restartCount: event.restartCount,
        restartDelayMs: null,
      }));
      break;
    case 'roundtable.child.exited':
      next = updateChild(sup, event.childId, (c) => ({
        ...c,
        status: 'stopped',
        exits: [
          ...c.exits,
          { at, reason: describe(event.reason), clean: isCleanExit(event.reason) },
        ].slice(-RECENT_EXITS),
      }));
      next = forgetOldStopped(next);
      break;
    case 'roundtable.child.restarting':
      next = updateChild(sup, event.childId, (c) => ({
        ...c,
        status: 'restarting',
        restartDelayMs: event.delayMs,
      }));
      break;
    case 'roundtable.child.backoff_exhausted':
      next = updateChild(sup, event.childId, (c) => ({ ...c, status: 'given_up' }));
      break;
    case 'roundtable.supervisor.intensity_reached':
      next = { ...sup, intensityReachedAt: at };
      break;
    case 'roundtable.supervisor.shutdown':
      next = { ...sup, status: 'shutdown', reason: describe(event.reason) };
      break;
  }
  return { ...base, supervisors: { ...base.supervisors, [sessionId]: next } };
}

/**
 * The supervisors no other supervisor lists as a child: the tree's roots.
 *
 * @example
 * ```ts
 * let t = applySupervisorEvent(EMPTY_TREE, 's:1', { type: 'roundtable.child.started', supervisorId: 'root', childId: 'sub', sessionId: 's:2', restartCount: 0 }, 1)
 * t = applySupervisorEvent(t, 's:2', { type: 'roundtable.child.started', supervisorId: 'sub', childId: 'w', sessionId: 'x:3', restartCount: 0 }, 1)
 * rootSupervisors(t) // => ['s:1']
 * ```
 */
export function rootSupervisors(tree: InspectorTree): string[] {
  const nested = new Set<string>();
  for (const s of Object.values(tree.supervisors)) {
    for (const c of s.children) if (c.sessionId) nested.add(c.sessionId);
  }
  return Object.keys(tree.supervisors).filter((id) => !nested.has(id));
}
