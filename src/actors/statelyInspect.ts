/**
 * A bridge from XState's inspection stream to the Stately inspector's
 * WebSocket wire format (`@statelyai/inspect`'s `createWebSocketInspector`),
 * enabled with `ROUNDTABLE_STATELY_INSPECT=ws://host:port`.
 *
 * Written against the documented frames, with the `ws` client, because that
 * package's client retries every 5 s forever, keeps Node alive after
 * `stop()` when no server answers, and resends its whole queue on every
 * reconnect. Here: the queue is bounded (oldest dropped, counted); a frame
 * is sent at most once; on (re)connect the live actors are registered anew
 * from their current snapshot instead of replaying history; reconnects back
 * off exponentially with jitter; timers and the socket are unref'd; and
 * `stop()` cancels everything.
 */
import type { IncomingMessage } from 'node:http';
import { WebSocket } from 'ws';
import type { ActorRefLike, InspectionEvent } from 'xstate';
import type { SupervisorClock } from '../supervisor/clock.js';
import { systemClock } from '../supervisor/clock.js';

/** The environment variable that turns the bridge on. */
export const STATELY_INSPECT_ENV = 'ROUNDTABLE_STATELY_INSPECT';

/** The version we speak of the Stately inspection protocol. */
export const STATELY_PROTOCOL_VERSION = '0.7.2';

interface StatelyBase {
  sessionId: string;
  rootId: string | undefined;
  /** Milliseconds since the epoch, as a string (Stately's `Date.now().toString()`). */
  createdAt: string;
  _version: string;
  id: null;
}

/** The three frames Stately's inspector reads. */
export type StatelyFrame =
  | (StatelyBase & {
      type: '@xstate.actor';
      name: string;
      definition: string | undefined;
      parentId: string | undefined;
      snapshot: unknown;
    })
  | (StatelyBase & { type: '@xstate.event'; event: unknown; sourceId: string | undefined })
  | (StatelyBase & { type: '@xstate.snapshot'; event: unknown; snapshot: unknown });

/** A bad `ROUNDTABLE_STATELY_INSPECT`. */
export class StatelyInspectConfigError extends Error {
  override readonly name = 'StatelyInspectConfigError';
  readonly code = 'STATELY_INSPECT_CONFIG';
}

export interface StatelyBridgeOptions {
  /** `ws://` or `wss://` URL of the Stately WebSocket relay. */
  url: string;
  clock?: SupervisorClock;
  /** Event and snapshot frames kept while disconnected; the oldest go first. Default 1000. */
  maxQueue?: number;
  /** Live actors remembered for re-registration on reconnect. Default 5000. */
  maxActors?: number;
  /** Reconnect delays: doubling from `minMs` up to `maxMs`, plus up to 20 % jitter. */
  backoff?: { minMs: number; maxMs: number };
  /** Deadline of one connection attempt. Default 5000 ms. */
  connectTimeoutMs?: number;
  /** Unsent bytes above which frames are dropped rather than queued in the socket. Default 4 MiB. */
  maxBufferedBytes?: number;
  random?: () => number;
  /** Connection errors (they never throw into the actors). Default: a process warning. */
  onError?: (error: unknown) => void;
}

export interface StatelyBridgeStats {
  state: 'connecting' | 'open' | 'waiting' | 'stopped';
  sent: number;
  queued: number;
  dropped: number;
  connects: number;
}

export interface StatelyBridge {
  /** Pass as `inspect` (or call from another observer). */
  readonly observer: (event: InspectionEvent) => void;
  stats(): StatelyBridgeStats;
  /** Stops for good: cancels the reconnect timer, closes the socket, drops the queue. */
  stop(): Promise<void>;
}

type Ref = ActorRefLike & {
  id?: string;
  _parent?: { sessionId: string };
  logic?: { config?: unknown };
};

/** Stately's replacer for machine configs: functions become `{ type: name }`. */
function definitionOf(ref: Ref): string | undefined {
  const config = ref.logic?.config;
  if (typeof config !== 'object' || config === null) return undefined;
  return JSON.stringify(config, (_k, v: unknown) =>
    typeof v === 'function' ? { type: (v as { name?: string }).name ?? '' } : v,
  );
}

/**
 * XState sends `@xstate.actor` from the actor's constructor, when reading its
 * snapshot throws; Stately's own default then is `{ status: 'active' }`.
 */
function snapshotOf(ref: Ref): unknown {
  try {
    return ref.getSnapshot();
  } catch {
    return { status: 'active' };
  }
}

/**
 * Converts one inspection event to Stately's frame; `null` for the frames
 * Stately does not read (microsteps, actions).
 *
 * @example
 * ```ts
 * const ref = { sessionId: 'x:1', id: 'job', logic: { config: { id: 'job' } }, getSnapshot: () => ({ status: 'active' }), send() {} }
 * toStatelyFrame({ type: '@xstate.actor', actorRef: ref, rootId: 'x:0' }, 5).name // => 'job'
 * toStatelyFrame({ type: '@xstate.actor', actorRef: ref, rootId: 'x:0' }, 5).definition // => '{"id":"job"}'
 * toStatelyFrame({ type: '@xstate.event', actorRef: ref, rootId: 'x:0', event: { type: 'GO' }, sourceRef: undefined }, 5) // => { type: '@xstate.event', sessionId: 'x:1', rootId: 'x:0', createdAt: '5', _version: '0.7.2', id: null, event: { type: 'GO' }, sourceId: undefined }
 * toStatelyFrame({ type: '@xstate.microstep', actorRef: ref, rootId: 'x:0' }, 5) // => null
 * ```
 */
export function toStatelyFrame(ev: InspectionEvent, now: number): StatelyFrame | null {
  const ref = ev.actorRef as Ref;
  const base: StatelyBase = {
    sessionId: ref.sessionId,
    rootId: ev.rootId,
    createdAt: String(now),
    _version: STATELY_PROTOCOL_VERSION,
    id: null,
  };
  switch (ev.type) {
    case '@xstate.actor': {
      const config = ref.logic?.config as { id?: unknown } | undefined;
      // XState names a root actor after its sessionId; Stately shows the machine id then.
      const name =
        ref.id === undefined || ref.id === ref.sessionId
          ? String(config?.id ?? ref.sessionId)
          : ref.id;
      return {
        type: '@xstate.actor',
        ...base,
        name,
        definition: definitionOf(ref) ?? JSON.stringify({ id: name }),
        parentId: ref._parent?.sessionId,
        snapshot: snapshotOf(ref),
      };
    }
    case '@xstate.event':
      return { type: '@xstate.event', ...base, event: ev.event, sourceId: ev.sourceRef?.sessionId };
    case '@xstate.snapshot':
      return { type: '@xstate.snapshot', ...base, event: ev.event, snapshot: ev.snapshot };
    default:
      return null;
  }
}

/** JSON that survives cycles, Errors, functions and bigints (as Stately's safe stringify does). */
function serialize(frame: StatelyFrame): string {
  const seen = new WeakSet<object>();
  return JSON.stringify(frame, (_k, v: unknown) => {
    if (typeof v === 'bigint') return v.toString();
    if (typeof v === 'function') return undefined;
    if (typeof v !== 'object' || v === null) return v;
    if (v instanceof Error) return { name: v.name, message: v.message };
    const ref = v as { sessionId?: unknown; send?: unknown };
    if (typeof ref.sessionId === 'string' && typeof ref.send === 'function') {
      return { id: ref.sessionId };
    }
    if (seen.has(v)) return '[Circular]';
    seen.add(v);
    return v;
  });
}

function unref(handle: unknown): void {
  (handle as { unref?: () => void } | null)?.unref?.();
}

/** Starts connecting at once. Throws `StatelyInspectConfigError` for a bad URL. */
export function createStatelyBridge(options: StatelyBridgeOptions): StatelyBridge {
  let url: URL;
  try {
    url = new URL(options.url);
  } catch (cause) {
    throw new StatelyInspectConfigError(`not a URL: ${options.url}`, { cause });
  }
  if (url.protocol !== 'ws:' && url.protocol !== 'wss:') {
    throw new StatelyInspectConfigError(`needs ws:// or wss://, got ${url.protocol}`);
  }
  const clock = options.clock ?? systemClock;
  const maxQueue = options.maxQueue ?? 1000;
  const maxActors = options.maxActors ?? 5000;
  const { minMs, maxMs } = options.backoff ?? { minMs: 500, maxMs: 30_000 };
  const maxBuffered = options.maxBufferedBytes ?? 4 * 1024 * 1024;
  const random = options.random ?? Math.random;
  const onError =
    options.onError ??
    ((error: unknown) =>
      process.emitWarning(`stately inspect: ${(error as Error)?.message ?? String(error)}`));

  /** Live actors by sessionId, for registration on (re)connect; oldest first. */
  const live = new Map<string, { ref: Ref; rootId: string | undefined }>();
  let queue: StatelyFrame[] = [];
  let ws: WebSocket | null = null;
  let timer: unknown = null;
  let attempt = 0;
  const stats: StatelyBridgeStats = {
    state: 'connecting',
    sent: 0,
    queued: 0,
    dropped: 0,
    connects: 0,
  };
  let closed: Promise<void> = Promise.resolve();

  const transmit = (frame: StatelyFrame): void => {
    if (ws === null || ws.readyState !== WebSocket.OPEN || ws.bufferedAmount > maxBuffered) {
      stats.dropped += 1;
      return;
    }
    ws.send(serialize(frame));
    stats.sent += 1;
  };

  const onOpen = (): void => {
    attempt = 0;
    stats.state = 'open';
    stats.connects += 1;
    // Register what is alive now, as it is now; never replay what was sent.
    const now = clock.now();
    for (const { ref, rootId } of live.values()) {
      const f = toStatelyFrame(
        { type: '@xstate.actor', actorRef: ref, rootId } as InspectionEvent,
        now,
      );
      if (f) transmit(f);
    }
    const pending = queue;
    queue = [];
    stats.queued = 0;
    for (const f of pending) transmit(f);
  };

  const scheduleReconnect = (): void => {
    if (stats.state === 'stopped' || timer !== null) return;
    stats.state = 'waiting';
    const base = Math.min(maxMs, minMs * 2 ** attempt);
    attempt += 1;
    timer = clock.setTimeout(
      () => {
        timer = null;
        connect();
      },
      Math.round(base * (1 + 0.2 * random())),
    );
    // Waiting to reconnect must never keep the process alive.
    unref(timer);
  };

  function connect(): void {
    if (stats.state === 'stopped') return;
    stats.state = 'connecting';
    const socket = new WebSocket(url, {
      handshakeTimeout: options.connectTimeoutMs ?? 5000,
      perMessageDeflate: false,
    });
    ws = socket;
    closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    // Neither the handshake nor the open socket may keep Node alive.
    socket.once('upgrade', (res: IncomingMessage) => res.socket.unref());
    socket.on('open', onOpen);
    // After stop(), the abort we caused is not news.
    socket.on('error', (err) => {
      if (stats.state !== 'stopped') onError(err);
    });
    socket.on('close', () => {
      if (ws === socket) ws = null;
      scheduleReconnect();
    });
  }

  /** Never throws into XState: a failure goes to `onError`. */
  const observer = (ev: InspectionEvent): void => {
    try {
      observe(ev);
    } catch (error) {
      onError(error);
    }
  };

  const observe = (ev: InspectionEvent): void => {
    if (stats.state === 'stopped') return;
    const ref = ev.actorRef as Ref;
    if (ev.type === '@xstate.actor') {
      live.set(ref.sessionId, { ref, rootId: ev.rootId });
      if (live.size > maxActors) live.delete(live.keys().next().value as string);
    } else if (ev.type === '@xstate.snapshot') {
      const status = (ev.snapshot as { status?: string }).status;
      if (status === 'done' || status === 'error' || status === 'stopped')
        live.delete(ref.sessionId);
    }
    const frame = toStatelyFrame(ev, clock.now());
    if (frame === null) return;
    if (stats.state === 'open') {
      transmit(frame);
      return;
    }
    // Actor frames are not queued: registration on connect covers them.
    if (frame.type === '@xstate.actor') return;
    queue.push(frame);
    if (queue.length > maxQueue) {
      queue.shift();
      stats.dropped += 1;
    }
    stats.queued = queue.length;
  };

  connect();

  return {
    observer,
    stats: () => ({ ...stats }),
    stop() {
      if (stats.state === 'stopped') return closed;
      stats.state = 'stopped';
      if (timer !== null) clock.clearTimeout(timer);
      timer = null;
      queue = [];
      stats.queued = 0;
      live.clear();
      const socket = ws;
      ws = null;
      if (socket === null || socket.readyState === WebSocket.CLOSED) return Promise.resolve();
      // terminate() works in every state, including a handshake in progress.
      socket.terminate();
      return closed;
    },
  };
}

/**
 * The bridge `ROUNDTABLE_STATELY_INSPECT` asks for, or `null` when it is unset.
 *
 * @example
 * ```ts
 * statelyBridgeFromEnv({}) // => null
 * statelyBridgeFromEnv({ ROUNDTABLE_STATELY_INSPECT: 'http://localhost:8080' }) // throws STATELY_INSPECT_CONFIG
 * ```
 */
export function statelyBridgeFromEnv(
  env: Record<string, string | undefined> = process.env,
  options: Omit<StatelyBridgeOptions, 'url'> = {},
): StatelyBridge | null {
  const url = env[STATELY_INSPECT_ENV];
  if (url === undefined || url.trim() === '') return null;
  return createStatelyBridge({ ...options, url: url.trim() });
}

/**
 * One `inspect` observer for the runtime: `observer`, plus the Stately
 * bridge when `ROUNDTABLE_STATELY_INSPECT` is set. Stop `bridge` on shutdown.
 *
 * @example
 * ```ts
 * const seen = []
 * const { inspect, bridge } = inspectWithStately((e) => seen.push(e.type), {})
 * bridge // => null
 * inspect({ type: '@xstate.event' })
 * seen // => ['@xstate.event']
 * ```
 */
export function inspectWithStately(
  observer: (event: InspectionEvent) => void,
  env: Record<string, string | undefined> = process.env,
  options: Omit<StatelyBridgeOptions, 'url'> = {},
): { inspect: (event: InspectionEvent) => void; bridge: StatelyBridge | null } {
  const bridge = statelyBridgeFromEnv(env, options);
  if (bridge === null) return { inspect: observer, bridge: null };
  return {
    inspect: (event) => {
      observer(event);
      bridge.observer(event);
    },
    bridge,
  };
}
