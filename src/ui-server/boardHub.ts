/**
 * The WebSocket side of the board: one view per user (plus the admin's view
 * of everyone), fan-out of card changes, inbound frame checks, flood limits,
 * the per-user subscribe and unsent-bytes budgets, and the heartbeat.
 *
 * Every subscriber shows a window (src/board/boardWindow.ts). Card changes
 * are gathered for one turn of the loop, then each view applies them to its
 * indexes and each group of sockets showing one window gets one `update`
 * frame, built once and sent to all of them, holding only what changed inside
 * the window (and the counts): a socket costs its window, never the line. A
 * snapshot is serialised once per (window, seq) and shared the same way.
 * When the source's line moves (a grant), the groups that show queued cards
 * ask their cards' positions again and send the ones that changed
 * (src/ui-server/linePlaces.ts): a grant costs the windows, not the line.
 * Every frame leaves through the sender (boardSender.ts), which holds the
 * byte budgets.
 */
import type { WebSocket } from 'ws';
import type { BoardCard, BoardSource } from '../board/boardPort.js';
import { CLOSE_CODES, type ErrorCode, PROTOCOL_VERSION } from '../board/boardProtocol.js';
import type { BoardWindow } from '../board/boardWindow.js';
import { type Principal, viewerOf } from './authenticate.js';
import { BoardSender, HUB_CLOSE_CODES } from './boardSender.js';
import { type BoardConnection, BoardView } from './boardView.js';
import { LinePlaces } from './linePlaces.js';
import { parseClientFrame } from './parseClientFrame.js';
import { fullBucket, take } from './tokenBucket.js';
import type { UiServerClock, UiServerLimits, UiServerLogger } from './uiServerOptions.js';

export { HUB_CLOSE_CODES } from './boardSender.js';

const ADMIN_VIEW = '\u0000admin';

/** Counters the metrics endpoint reads. */
export interface HubStats {
  connections: number;
  framesSent: number;
  /** Sockets closed with 4008 since start. */
  slowConsumersClosed: number;
}

/** Owns every board WebSocket connection of one server. */
export class BoardHub {
  private readonly views = new Map<string, BoardView>();
  private readonly connections = new Set<BoardConnection>();
  private readonly unsubscribe: () => void;
  private readonly unsubscribeLine: () => void;
  /** Held while any socket is open: the source keeps other nodes' changes coming. */
  private unwatch: (() => void) | null = null;
  private readonly places: LinePlaces;
  private readonly timer: unknown;
  private readonly out: BoardSender;
  private flushQueued = false;
  /** The line moved since the last flush: positions in windows may have changed. */
  private lineMoved = false;

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
    this.places = new LinePlaces(deps.source.line);
    const { limits, clock, logger } = deps;
    this.out = new BoardSender({ limits, clock, logger, detach: (conn) => this.detach(conn) });
    // Views exist for every configured user from the start, each read with
    // the user's filter in the query, then kept by the changes.
    this.views.set(ADMIN_VIEW, this.newView(null));
    for (const id of new Set(deps.userIds)) this.views.set(id, this.newView(id));
    // Passive: the hub's views are always there; the board is watched only
    // while a socket is open (see attach), so a node nobody looks at is not
    // told of every tick on the other nodes.
    this.unsubscribe = deps.source.subscribe((card) => this.publish(card), {
      passive: true,
      onRemoved: (taskIds) => this.unpublish(taskIds),
    });
    this.unsubscribeLine =
      deps.source.line?.subscribe(() => {
        this.places.moved();
        this.lineMoved = true;
        this.flushSoon();
      }) ?? (() => {});
    this.timer = deps.clock.setInterval(() => this.heartbeat(), deps.limits.heartbeatMs);
  }

  /** Open connections. */
  stats(): HubStats {
    return {
      connections: this.connections.size,
      framesSent: this.out.framesSent,
      slowConsumersClosed: this.out.slowClosed,
    };
  }

  /**
   * Takes over an authenticated socket. `firstFrame`, the upgrade URL's
   * `subscribe` (docs/board-protocol.md), is handled after the hello as if
   * it were the socket's first message.
   */
  attach(ws: WebSocket, principal: Principal, firstFrame: string | null = null): void {
    const viewer = viewerOf(principal);
    const view = this.views.get(viewer ?? ADMIN_VIEW);
    if (view === undefined) {
      // Unreachable: every principal comes from the configured tokens.
      ws.terminate();
      return;
    }
    const { limits, clock } = this.deps;
    const conn: BoardConnection = {
      ws,
      view,
      group: null,
      bucket: fullBucket(
        { burst: limits.floodBurst, perSecond: limits.floodPerSecond },
        clock.now(),
      ),
      strikes: 0,
      alive: true,
      closeTimer: null,
    };
    this.connections.add(conn);
    if (this.connections.size === 1) this.unwatch = this.deps.source.watch?.() ?? null;
    view.connections.add(conn);
    ws.on('pong', () => {
      conn.alive = true;
    });
    ws.on('message', (data, isBinary) => this.receiveGuarded(conn, data, isBinary));
    ws.on('error', (err) => {
      // ws closes the socket itself (1009 for an oversized frame, 1002 for a
      // protocol error); log it so nothing is swallowed.
      this.deps.logger.warn({ err, userId: viewer }, 'board socket error');
    });
    ws.on('close', () => {
      this.deps.clock.clearTimeout(conn.closeTimer);
      this.detach(conn);
    });
    this.out.send(conn, {
      type: 'hello',
      v: PROTOCOL_VERSION,
      userId: viewer,
      heartbeatMs: limits.heartbeatMs,
    });
    if (firstFrame !== null) this.receiveGuarded(conn, firstFrame, false);
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
    const { clock } = this.deps;
    clock.clearInterval(this.timer);
    this.unsubscribe();
    this.unsubscribeLine();
    this.stopWatching();
    for (const view of this.views.values()) view.stopWaiting(clock);
    for (const conn of this.connections) conn.ws.close(CLOSE_CODES.goingAway, 'server closing');
  }

  /**
   * Cuts every socket still open: after `close()`, those that never answered
   * its close frame. Until they close, the listener's close waits for them.
   */
  terminate(): void {
    for (const conn of this.connections) conn.ws.terminate();
  }

  private newView(userId: string | null): BoardView {
    const { limits: l, epoch, clock, source } = this.deps;
    const budget = { burst: l.subscribeBurst, perSecond: l.subscribePerSecond };
    return new BoardView(userId, epoch, source.cards(userId), budget, clock.now(), this.places);
  }

  private detach(conn: BoardConnection): void {
    if (this.connections.delete(conn) && this.connections.size === 0) this.stopWatching();
    conn.view.remove(conn);
  }

  private stopWatching(): void {
    this.unwatch?.();
    this.unwatch = null;
  }

  private publish(card: BoardCard): void {
    this.views.get(ADMIN_VIEW)?.change(card);
    this.views.get(card.userId)?.change(card);
    this.flushSoon();
  }

  /** Cards that left the board (retention): every view that holds one drops it. */
  private unpublish(taskIds: readonly string[]): void {
    for (const view of this.views.values()) for (const id of taskIds) view.drop(id);
    this.flushSoon();
  }

  /** A burst of changes (a tick's worth) is one flush. */
  private flushSoon(): void {
    if (!this.flushQueued) {
      this.flushQueued = true;
      queueMicrotask(() => this.flush());
    }
  }

  /** Sends every view's pending changes to the groups they touch. */
  private flush(): void {
    this.flushQueued = false;
    const lineMoved = this.lineMoved;
    this.lineMoved = false;
    for (const view of this.views.values()) {
      for (const { group, frame } of view.flush(lineMoved)) {
        if (group.subscribers.size === 0) continue;
        // Encoded once for the whole group rather than once per socket by ws.
        const bytes = Buffer.from(frame);
        // Summed from the sends themselves: no second pass over the sockets
        // unless the view is over its budget.
        let buffered = 0;
        for (const conn of [...group.subscribers]) buffered += this.out.sendRaw(conn, bytes);
        if (buffered > this.deps.limits.maxUserBufferedBytes) this.out.enforceBudget(view);
      }
    }
  }

  /** A frame the hub fails on closes that socket (1011), never the process. */
  private receiveGuarded(conn: BoardConnection, data: unknown, isBinary: boolean): void {
    try {
      this.receive(conn, data, isBinary);
    } catch (err) {
      this.deps.logger.error({ err, userId: conn.view.userId }, 'board: failed on a frame');
      this.detach(conn);
      conn.ws.close(HUB_CLOSE_CODES.internalError, 'internal error');
    }
  }

  private receive(conn: BoardConnection, data: unknown, isBinary: boolean): void {
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
    else if (frame.type === 'ping') this.out.send(conn, { type: 'pong', id: frame.id });
    else if (frame.v !== PROTOCOL_VERSION) {
      this.fail(conn, 'unsupported_version', `this server speaks v${PROTOCOL_VERSION}`);
    } else this.subscribe(conn, frame.window ?? {});
  }

  /**
   * Serves a subscribe within the user's budget, or keeps it (the latest per
   * socket, in arrival order) until the budget refills. Nothing is refused:
   * a client whose subscribe is dropped would wait for a snapshot forever.
   */
  private subscribe(conn: BoardConnection, window: BoardWindow): void {
    const { view } = conn;
    const now = this.deps.clock.now();
    if (view.pending.size === 0 && view.takeSubscribe(now)) {
      this.serve(conn, window);
      return;
    }
    view.pending.set(conn, window);
    this.scheduleDrain(view);
  }

  private scheduleDrain(view: BoardView): void {
    if (view.drainTimer !== null) return;
    const { clock } = this.deps;
    view.drainTimer = clock.setTimeout(() => {
      view.drainTimer = null;
      for (const [conn, window] of view.pending) {
        if (!view.takeSubscribe(clock.now())) break;
        view.pending.delete(conn);
        this.serve(conn, window);
      }
      if (view.pending.size > 0) this.scheduleDrain(view);
    }, view.msUntilSubscribe(clock.now()));
  }

  /** A snapshot of the window, after whatever changes are pending went to the groups. */
  private serve(conn: BoardConnection, window: BoardWindow): void {
    this.flush();
    this.out.sendRaw(conn, conn.view.join(conn, window));
    this.out.enforceBudget(conn.view);
  }

  private fail(conn: BoardConnection, code: ErrorCode, message: string): void {
    this.out.send(conn, { type: 'error', code, message });
  }
}
