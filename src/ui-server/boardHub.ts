/**
 * The WebSocket side of the board: one patch log per view (each user, plus the
 * admin's view of everyone), fan-out of card changes, inbound frame checks,
 * flood limits and the heartbeat.
 *
 * A patch is serialised once per view and the same string goes to every
 * subscriber of that view, so fan-out costs one `send` per client.
 */
import type { WebSocket } from 'ws';
import {
  CLIENT_FRAME_TYPES,
  CLOSE_CODES,
  type ClientFrame,
  clientFrameSchema,
  type ErrorCode,
  PROTOCOL_VERSION,
  type ResumePoint,
  type ServerFrame,
} from '../client/boardProtocol.js';
import { type Principal, viewerOf } from './authenticate.js';
import type { BoardCard, BoardSource } from './boardPort.js';
import { PatchLog } from './patchLog.js';
import { fullBucket, type TokenBucket, take } from './tokenBucket.js';
import type { UiServerClock, UiServerLimits, UiServerLogger } from './uiServerOptions.js';

interface View {
  userId: string | null;
  log: PatchLog;
  subscribers: Set<Connection>;
}

interface Connection {
  ws: WebSocket;
  view: View;
  subscribed: boolean;
  bucket: TokenBucket;
  strikes: number;
  alive: boolean;
}

const ADMIN_VIEW = '\u0000admin';

/** Counters the metrics endpoint reads. */
export interface HubStats {
  connections: number;
  framesSent: number;
}

/** Owns every board WebSocket connection of one server. */
export class BoardHub {
  private readonly views = new Map<string, View>();
  private readonly connections = new Set<Connection>();
  private readonly unsubscribe: () => void;
  private readonly timer: unknown;
  private framesSent = 0;

  constructor(
    private readonly deps: {
      source: BoardSource;
      userIds: readonly string[];
      epoch: string;
      limits: UiServerLimits;
      clock: UiServerClock;
      logger: UiServerLogger;
    },
  ) {
    // Logs exist for every configured user from the start: a change made while
    // a user is offline must still be in the log when they resume.
    this.views.set(ADMIN_VIEW, this.newView(null));
    for (const id of new Set(deps.userIds)) this.views.set(id, this.newView(id));
    this.unsubscribe = deps.source.subscribe((card) => this.publish(card));
    this.timer = deps.clock.setInterval(() => this.heartbeat(), deps.limits.heartbeatMs);
  }

  /** Open connections. */
  stats(): HubStats {
    return { connections: this.connections.size, framesSent: this.framesSent };
  }

  /** Takes over an authenticated socket. */
  attach(ws: WebSocket, principal: Principal): void {
    const viewer = viewerOf(principal);
    const view = this.views.get(viewer ?? ADMIN_VIEW);
    if (view === undefined) {
      // Unreachable: every principal comes from the configured tokens.
      ws.terminate();
      return;
    }
    const { limits, clock } = this.deps;
    const conn: Connection = {
      ws,
      view,
      subscribed: false,
      bucket: fullBucket(
        { burst: limits.floodBurst, perSecond: limits.floodPerSecond },
        clock.now(),
      ),
      strikes: 0,
      alive: true,
    };
    this.connections.add(conn);
    ws.on('pong', () => {
      conn.alive = true;
    });
    ws.on('message', (data, isBinary) => this.receive(conn, data, isBinary));
    ws.on('error', (err) => {
      // ws closes the socket itself (1009 for an oversized frame, 1002 for a
      // protocol error); log it so nothing is swallowed.
      this.deps.logger.warn({ err, userId: viewer }, 'board socket error');
    });
    ws.on('close', () => this.detach(conn));
    this.send(conn, {
      type: 'hello',
      v: PROTOCOL_VERSION,
      userId: viewer,
      heartbeatMs: limits.heartbeatMs,
    });
  }

  /** One heartbeat round; the clock calls it every `heartbeatMs`. */
  heartbeat(): void {
    for (const conn of this.connections) {
      if (!conn.alive) {
        conn.ws.terminate();
        this.detach(conn);
        continue;
      }
      conn.alive = false;
      conn.ws.ping();
    }
  }

  /** Stops the heartbeat and the source subscription, closes every socket with 1001. Idempotent. */
  close(): void {
    this.deps.clock.clearInterval(this.timer);
    this.unsubscribe();
    for (const conn of this.connections) conn.ws.close(CLOSE_CODES.goingAway, 'server closing');
  }

  private newView(userId: string | null): View {
    return {
      userId,
      log: new PatchLog(this.deps.epoch, this.deps.limits.resumeBuffer),
      subscribers: new Set(),
    };
  }

  private detach(conn: Connection): void {
    this.connections.delete(conn);
    conn.view.subscribers.delete(conn);
  }

  private publish(card: BoardCard): void {
    const cardJson = JSON.stringify(card);
    const render = (seq: number) => `{"type":"patch","seq":${seq},"card":${cardJson}}`;
    const targets = [this.views.get(ADMIN_VIEW), this.views.get(card.userId)];
    for (const view of targets) {
      if (view === undefined) continue;
      const { frame } = view.log.append(render);
      if (view.subscribers.size === 0) continue;
      // Encoded once for the whole view rather than once per socket by ws.
      const bytes = Buffer.from(frame);
      for (const conn of view.subscribers) this.sendRaw(conn, bytes);
    }
  }

  private receive(conn: Connection, data: unknown, isBinary: boolean): void {
    const { limits, clock } = this.deps;
    const taken = take(
      conn.bucket,
      { burst: limits.floodBurst, perSecond: limits.floodPerSecond },
      clock.now(),
    );
    conn.bucket = taken.bucket;
    if (!taken.allowed) {
      conn.strikes += 1;
      if (conn.strikes === 1) {
        this.fail(conn, 'rate_limited', `more than ${limits.floodPerSecond} frames per second`);
      } else if (conn.strikes > limits.floodStrikes) {
        conn.ws.close(CLOSE_CODES.flood, 'flood');
      }
      return;
    }
    conn.strikes = 0;
    const frame = parseClientFrame(data, isBinary);
    if ('code' in frame) this.fail(conn, frame.code, frame.message);
    else if (frame.type === 'ping') this.send(conn, { type: 'pong', id: frame.id });
    else if (frame.v !== PROTOCOL_VERSION) {
      this.fail(conn, 'unsupported_version', `this server speaks v${PROTOCOL_VERSION}`);
    } else this.subscribe(conn, frame.resume);
  }

  private subscribe(conn: Connection, resume: ResumePoint | undefined): void {
    const { view } = conn;
    conn.subscribed = true;
    view.subscribers.add(conn);
    const decision = resume ? view.log.resume(resume) : { kind: 'snapshot' as const };
    if (decision.kind === 'replay') {
      this.send(conn, { type: 'resumed', epoch: view.log.epoch, seq: resume!.seq });
      for (const patch of decision.patches) this.sendRaw(conn, patch.frame);
      return;
    }
    // Synchronous read: no patch can be appended between reading the cards and
    // stamping them with the log's sequence number.
    this.send(conn, {
      type: 'snapshot',
      epoch: view.log.epoch,
      seq: view.log.seq,
      cards: this.deps.source.cards(view.userId),
    });
  }

  private fail(conn: Connection, code: ErrorCode, message: string): void {
    this.send(conn, { type: 'error', code, message });
  }

  private send(conn: Connection, frame: ServerFrame): void {
    this.sendRaw(conn, JSON.stringify(frame));
  }

  private sendRaw(conn: Connection, frame: string | Buffer): void {
    if (conn.ws.readyState !== conn.ws.OPEN) return;
    if (conn.ws.bufferedAmount > this.deps.limits.maxBufferedBytes) {
      // A consumer this far behind is as good as dead; it reconnects and resumes.
      this.deps.logger.warn({ buffered: conn.ws.bufferedAmount }, 'board: slow consumer dropped');
      conn.ws.terminate();
      this.detach(conn);
      return;
    }
    conn.ws.send(frame, { binary: false });
    this.framesSent += 1;
  }
}

/** Checks one inbound frame: a valid client frame, or the error frame's code and message. */
function parseClientFrame(
  data: unknown,
  isBinary: boolean,
): ClientFrame | { code: ErrorCode; message: string } {
  if (isBinary) return { code: 'bad_frame', message: 'binary frames are not part of protocol v1' };
  let parsed: unknown;
  try {
    parsed = JSON.parse(String(data));
  } catch (err) {
    return { code: 'bad_json', message: `not JSON: ${(err as Error).message}` };
  }
  const type = (parsed as { type?: unknown } | null)?.type;
  if (typeof type !== 'string' || !CLIENT_FRAME_TYPES.includes(type)) {
    return { code: 'unknown_type', message: `unknown frame type ${JSON.stringify(type) ?? ''}` };
  }
  const frame = clientFrameSchema.safeParse(parsed);
  if (frame.success) return frame.data;
  const issue = frame.error.issues[0]!;
  return { code: 'bad_frame', message: `${issue.path.join('.') || type}: ${issue.message}` };
}
