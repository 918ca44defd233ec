/**
 * A machine's statechart as plain data the page can draw: nodes (with their
 * parent and initial child) and edges (with readable labels), from
 * `toDirectedGraph` of `xstate/graph`. Its own `toJSON` keeps only node ids
 * and drops the edges, so we walk the graph ourselves.
 */
import { type AnyStateMachine, StateMachine } from 'xstate';
import { type DirectedGraphNode, toDirectedGraph } from 'xstate/graph';

export interface GraphNode {
  /** The state node's id, e.g. `taskRunner.running`. */
  id: string;
  key: string;
  type: string;
  parent: string | null;
  /** The id of the initial child of a compound node. */
  initial: string | null;
}

export interface GraphEdge {
  id: string;
  source: string;
  target: string;
  label: string;
  guard: string | null;
}

export interface StatechartGraph {
  rootId: string;
  nodes: GraphNode[];
  edges: GraphEdge[];
}

/**
 * Turns event names into what a reader of one machine's chart expects:
 * XState's internal names readable, and roundtable's namespace dropped (the
 * chart is that namespace's machine; the event list shows full names). An
 * I/O answer `roundtable.<ns>.<op>.done` reads as an invoke's would,
 * `done: <op>`; its `.error` reads `error` (the state it leaves from is the
 * one that asked, so the name would only widen the chart).
 *
 * @example
 * ```ts
 * edgeLabel('GO') // => 'GO'
 * edgeLabel('xstate.after.100.w.busy.a') // => 'after 100 ms'
 * edgeLabel('xstate.after.pollMs.w.busy') // => 'after pollMs'
 * edgeLabel('xstate.done.actor.startRun') // => 'done: startRun'
 * edgeLabel('xstate.error.actor.startRun') // => 'error: startRun'
 * edgeLabel('xstate.done.state.w.busy') // => 'done: w.busy'
 * edgeLabel('') // => 'always'
 * edgeLabel('xstate.done.actor.0.m.a', new Map([['0.m.a', 'loadRow']])) // => 'done: loadRow'
 * edgeLabel('roundtable.pool.hold') // => 'hold'
 * edgeLabel('roundtable.runner.loadRow.done') // => 'done: loadRow'
 * edgeLabel('roundtable.run.attach.error') // => 'error'
 * edgeLabel('roundtable.runner.pool_restarted') // => 'pool_restarted'
 * ```
 */
export function edgeLabel(
  eventType: string,
  invokedSrc: ReadonlyMap<string, string> = new Map(),
): string {
  if (eventType === '') return 'always';
  // The patterns' groups are not optional: a match sets every one (the `!`s).
  const after = /^xstate\.after\.([^.]+)\./.exec(eventType);
  if (after) return /^\d+$/.test(after[1]!) ? `after ${after[1]} ms` : `after ${after[1]}`;
  const done = /^xstate\.(done|error)\.(?:actor|state)\.(.+)$/.exec(eventType);
  if (done) return `${done[1]}: ${invokedSrc.get(done[2]!) ?? done[2]}`;
  const ours = /^roundtable\.[A-Za-z]+\.(.+)$/.exec(eventType)?.[1];
  if (ours === undefined) return eventType;
  if (ours.endsWith('.error')) return 'error';
  const answer = /^(.+)\.done$/.exec(ours);
  return answer ? `done: ${answer[1]}` : ours;
}

/**
 * Invoke ids XState made up (`0.taskRunner.loading`) mapped to the name of
 * what they invoke (`loadRow`): that name is what a reader knows.
 */
function invokedSources(
  n: DirectedGraphNode,
  out = new Map<string, string>(),
): Map<string, string> {
  for (const inv of n.stateNode.invoke) {
    const src = inv.src as unknown;
    const name =
      typeof src === 'string' ? src : ((src as { id?: unknown } | null)?.id as string | undefined);
    if (/^\d+\./.test(inv.id) && typeof name === 'string') out.set(inv.id, name);
  }
  for (const c of n.children) invokedSources(c, out);
  return out;
}

function guardName(guard: unknown): string | null {
  if (guard === undefined || guard === null) return null;
  if (typeof guard === 'string') return guard;
  if (typeof guard === 'function') return guard.name || 'guard';
  if (typeof guard === 'object' && 'type' in guard)
    return String((guard as { type: unknown }).type);
  return 'guard';
}

function walk(
  n: DirectedGraphNode,
  parent: string | null,
  out: StatechartGraph,
  invoked: ReadonlyMap<string, string>,
): void {
  const sn = n.stateNode;
  const initialTarget = (sn.initial as unknown as { target?: Array<{ id: string }> } | undefined)
    ?.target?.[0];
  out.nodes.push({
    id: n.id,
    key: sn.key,
    type: sn.type,
    parent,
    initial: initialTarget?.id ?? null,
  });
  for (const e of n.edges) {
    out.edges.push({
      id: e.id,
      source: e.source.id,
      target: e.target.id,
      label: edgeLabel(e.label.text, invoked),
      guard: guardName(e.transition.guard),
    });
  }
  for (const c of n.children) walk(c, n.id, out, invoked);
}

const cache = new WeakMap<object, StatechartGraph>();

/** True for state machine logic (not promise, callback or transition logic). */
export function isMachine(logic: unknown): logic is AnyStateMachine {
  return logic instanceof StateMachine;
}

/**
 * The graph of a machine, built once per machine object; `null` for logic
 * that is not a statechart.
 */
export function machineGraph(logic: unknown): StatechartGraph | null {
  if (!isMachine(logic)) return null;
  const hit = cache.get(logic);
  if (hit) return hit;
  const out: StatechartGraph = { rootId: logic.root.id, nodes: [], edges: [] };
  const directed = toDirectedGraph(logic);
  walk(directed, null, out, invokedSources(directed));
  cache.set(logic, out);
  return out;
}

/** The ids of the state nodes a machine snapshot is in (ancestors included). */
export function activeStateIds(snapshot: unknown): string[] {
  const nodes = (snapshot as { _nodes?: unknown } | null)?._nodes;
  if (!Array.isArray(nodes)) return [];
  return nodes.map((n) => String((n as { id: unknown }).id));
}
