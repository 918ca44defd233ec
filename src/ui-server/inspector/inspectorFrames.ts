/**
 * The frames the hub sends, built from the collector's records: the tree
 * with every actor's summary, one actor's state, and the events it received
 * since a viewer's cursor. Pure over what the collector holds; the hub
 * decides who gets what and when (InspectorHub.ts). Live values (context,
 * events) are serialised here and only here, bounded by `SafeJsonLimits`.
 */
import type { ActorRecord, EventEntry, InspectionCollector } from './InspectionCollector.js';
import type { ActorJob, ActorSummary, InspectServerFrame } from './inspectorProtocol.js';
import { rootSupervisors } from './inspectorTree.js';
import type { JobLookup } from './jobIndex.js';
import { activeStateIds, isMachine, machineGraph } from './machineGraph.js';
import type { RingRead } from './Ring.js';
import { type SafeJsonLimits, toSafeJson } from './safeJson.js';

type Frame<T extends InspectServerFrame['type']> = Extract<InspectServerFrame, { type: T }>;

/** The tree and every actor's summary, each runner named by its job. */
export function treeFrame(
  c: Pick<InspectionCollector, 'actors' | 'tree' | 'treeVersion'>,
  jobs: JobLookup | null,
): Frame<'tree'> {
  const actors: ActorSummary[] = [];
  for (const r of c.actors.values()) {
    actors.push({
      sessionId: r.sessionId,
      id: r.id,
      parentId: r.parentId,
      systemId: r.systemId,
      status: r.status,
      supervisor: r.supervisor,
      machine: isMachine(r.logic),
      job: jobOf(r, jobs),
    });
  }
  return {
    type: 'tree',
    version: c.treeVersion,
    tree: c.tree,
    roots: rootSupervisors(c.tree),
    actors,
  };
}

/**
 * The board's card for a runner, or the user its context names.
 *
 * @example
 * ```ts
 * const jobs = { jobOf: (id) => (id === 'ses_1' ? { taskId: 't1', title: 'build', userId: 'alice' } : undefined) }
 * jobOf({ id: 'ses_1', snapshot: undefined }, jobs) // => { taskId: 't1', title: 'build', userId: 'alice' }
 * jobOf({ id: 'ses_2', snapshot: { context: { userId: 'bob' } } }, jobs) // => { taskId: null, title: null, userId: 'bob' }
 * jobOf({ id: 'ses_3', snapshot: { context: { userId: 7 } } }, null) // => null
 * ```
 */
export function jobOf(
  r: Pick<ActorRecord, 'id' | 'snapshot'>,
  jobs: JobLookup | null,
): ActorJob | null {
  const known = jobs?.jobOf(r.id);
  if (known) return known;
  const userId = (r.snapshot as { context?: { userId?: unknown } } | undefined)?.context?.userId;
  return typeof userId === 'string' ? { taskId: null, title: null, userId } : null;
}

/** One actor's state; `withGraph` adds its statechart (the first frame after a selection). */
export function actorFrame(
  rec: ActorRecord,
  withGraph: boolean,
  json: Partial<SafeJsonLimits>,
): Frame<'actor'> {
  const s = (rec.snapshot ?? {}) as {
    value?: unknown;
    context?: unknown;
    output?: unknown;
    error?: unknown;
  };
  return {
    type: 'actor',
    sessionId: rec.sessionId,
    id: rec.id,
    parentId: rec.parentId,
    status: rec.status,
    value: toSafeJson(s.value, json),
    active: activeStateIds(rec.snapshot),
    context: toSafeJson(s.context, json),
    output: toSafeJson(s.output, json),
    error: toSafeJson(s.error, json),
    ...(withGraph ? { graph: machineGraph(rec.logic) } : {}),
  };
}

/**
 * The events read after a viewer's `cursor`, numbered by their seq; null
 * when there is nothing to send. `reset` tells the viewer to drop what it
 * holds: some were lost, or it had none (cursor 0).
 *
 * @example
 * ```ts
 * const read = { items: [{ at: 5, type: 'GO', sourceId: null, event: { type: 'GO' } }], next: 4, lost: false }
 * eventsFrame('s', read, 3, {}) // => { type: 'events', sessionId: 's', reset: false, events: [{ seq: 4, at: 5, type: 'GO', sourceId: null, event: { type: 'GO' } }] }
 * eventsFrame('s', read, 0, {}).reset // => true
 * eventsFrame('s', { items: [], next: 4, lost: false }, 4, {}) // => null
 * eventsFrame('s', { items: [], next: 9, lost: true }, 4, {}).events // => []
 * ```
 */
export function eventsFrame(
  sessionId: string,
  read: RingRead<EventEntry>,
  cursor: number,
  json: Partial<SafeJsonLimits>,
): Frame<'events'> | null {
  if (read.items.length === 0 && !read.lost) return null;
  const first = read.next - read.items.length + 1;
  return {
    type: 'events',
    sessionId,
    reset: read.lost || cursor === 0,
    events: read.items.map((e, i) => ({
      seq: first + i,
      at: e.at,
      type: e.type,
      sourceId: e.sourceId,
      event: toSafeJson(e.event, json),
    })),
  };
}
