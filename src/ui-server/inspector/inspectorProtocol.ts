/**
 * Inspector protocol v1: the admin-only topic at `/inspect/ws`. Documented in
 * docs/inspector.md; change both together. Imports nothing from `node:*`:
 * the page imports its types.
 *
 * Every server frame carries state, not a delta that must not be missed:
 * `tree` and `actor` replace what the page had, `timeline` and `events` say
 * `reset: true` when the viewer fell further behind than the buffer holds,
 * and on a connection's (a selection's) first one. So the server can skip a slow viewer and catch it up later at no cost.
 */

import type { InspectorTree } from './inspectorTree.js';
import type { StatechartGraph } from './machineGraph.js';
import type { Json } from './safeJson.js';
import type { TimelineEntry } from './timeline.js';

export const INSPECT_PROTOCOL_VERSION = 1;
/** The WebSocket subprotocol the server selects. */
export const INSPECT_SUBPROTOCOL = 'roundtable.inspect.v1';
/**
 * The bearer-token subprotocol prefix, the board's (`roundtable.bearer.`).
 * Repeated here so the page bundle does not pull in the board protocol's
 * zod schemas; a test checks the two are equal.
 */
export const BEARER_SUBPROTOCOL_PREFIX = 'roundtable.bearer.';
/** Where the topic lives on the UI server. */
export const INSPECT_WS_PATH = '/inspect/ws';

/** The layout engine's script, loaded by the page after its first paint. */
export const INSPECT_ELK_PATH = '/inspect-elk.js';

/** `POST` here `{ sessionId | path, reason }` to exit a supervised child (admin). */
export const INSPECT_EXIT_PATH = '/inspect/api/exit';

/** The `error.code` of a rejected exit request. */
export type InspectApiErrorCode =
  | 'bad_json'
  | 'bad_request'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'not_running'
  | 'ambiguous'
  | 'payload_too_large'
  | 'method_not_allowed'
  | 'unavailable';

/**
 * The job an actor runs (a TaskRunner and the board's card of its session):
 * `taskId` and `title` when the UI server's board knows the session, else
 * only the `userId` the actor's context holds.
 */
export interface ActorJob {
  taskId: string | null;
  title: string | null;
  userId: string;
}

/**
 * Where the board shows a job (the board page's route); the inspector links
 * a TaskRunner there.
 *
 * @example
 * ```ts
 * boardJobHref('t 1') // => '/#/jobs/t%201'
 * ```
 */
export function boardJobHref(taskId: string): string {
  return `/#/jobs/${encodeURIComponent(taskId)}`;
}

/** One actor in the tree frame's flat list. */
export interface ActorSummary {
  sessionId: string;
  id: string;
  parentId: string | null;
  systemId: string | null;
  status: string;
  supervisor: boolean;
  /** True when it is a state machine (it has a statechart to draw). */
  machine: boolean;
  /** The job it runs, for a TaskRunner; null for the rest. */
  job: ActorJob | null;
}

/** One event an actor received, as sent. */
export interface EventLine {
  seq: number;
  at: number;
  type: string;
  sourceId: string | null;
  event: Json;
}

export type InspectServerFrame =
  | {
      type: 'hello';
      protocol: number;
      now: number;
      limits: { eventsPerActor: number; timelineSize: number; flushMs: number };
    }
  | {
      type: 'tree';
      version: number;
      tree: InspectorTree;
      /** Root supervisors' sessionIds, in the order they appeared. */
      roots: string[];
      actors: ActorSummary[];
    }
  | {
      type: 'actor';
      sessionId: string;
      id: string;
      parentId: string | null;
      status: string;
      value: Json;
      /** Ids of the state nodes it is in, ancestors included. */
      active: string[];
      context: Json;
      /** Output when done, error when failed. */
      output: Json;
      error: Json;
      /** Sent with the first actor frame after a selection; omitted after. */
      graph?: StatechartGraph | null;
    }
  | { type: 'events'; sessionId: string; reset: boolean; events: EventLine[] }
  | { type: 'timeline'; reset: boolean; entries: TimelineEntry[] }
  | { type: 'gone'; sessionId: string }
  | { type: 'error'; code: InspectErrorCode; message: string };

export type InspectErrorCode = 'bad_json' | 'bad_frame' | 'observer_failed';

/** What a viewer sends: which actor to follow in detail (null: none). */
export type InspectClientFrame = { type: 'select'; sessionId: string | null };
