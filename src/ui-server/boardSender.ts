/**
 * The outbound side of the board's sockets: every frame goes through here,
 * and so do the two byte budgets. One socket more than `maxBufferedBytes`
 * behind is cut (it reconnects and subscribes again); a user whose sockets
 * together hold more than `maxUserBufferedBytes` unsent loses its slowest
 * ones, closed with 4008 and cut after a grace if the close frame is never
 * read. The hub decides what to send (boardHub.ts); this decides whether a
 * socket can still take it.
 */
import type { ServerFrame } from '../board/boardProtocol.js';
import type { BoardConnection, BoardView } from './boardView.js';
import type { UiServerClock, UiServerLimits, UiServerLogger } from './uiServerOptions.js';

/**
 * Close codes of the hub beyond `CLOSE_CODES` of the protocol (documented in
 * docs/board-protocol.md): 4008 for a socket closed because its user's
 * sockets hold more than `maxUserBufferedBytes` unsent, 1011 for a frame the
 * server failed on.
 */
export const HUB_CLOSE_CODES = { slowConsumer: 4008, internalError: 1011 } as const;

/** Sends frames to board sockets within their byte budgets, and counts what it did. */
export class BoardSender {
  /** Frames handed to a socket since start. */
  framesSent = 0;
  /** Sockets closed with 4008 since start. */
  slowClosed = 0;

  constructor(
    private readonly deps: {
      limits: UiServerLimits;
      clock: UiServerClock;
      logger: UiServerLogger;
      /** Forgets a socket the sender gave up on. */
      detach(conn: BoardConnection): void;
    },
  ) {}

  /** One frame to one socket, then the budget of its view. */
  send(conn: BoardConnection, frame: ServerFrame): void {
    this.sendRaw(conn, JSON.stringify(frame));
    this.enforceBudget(conn.view);
  }

  /** Sends one frame; returns the bytes the socket has queued after it (0 if it is gone). */
  sendRaw(conn: BoardConnection, frame: string | Buffer): number {
    if (conn.ws.readyState !== conn.ws.OPEN) return 0;
    conn.ws.send(frame, { binary: false });
    this.framesSent += 1;
    const buffered = conn.ws.bufferedAmount;
    if (buffered > this.deps.limits.maxBufferedBytes) {
      // A consumer this far behind is as good as dead; it reconnects and subscribes again.
      this.deps.logger.warn({ buffered }, 'board: slow consumer dropped');
      conn.ws.terminate();
      this.deps.detach(conn);
      return 0;
    }
    return buffered;
  }

  /** Closes the view's slowest sockets (4008) while its unsent bytes exceed the budget. */
  enforceBudget(view: BoardView): void {
    const { limits, clock, logger } = this.deps;
    for (const conn of view.overBudget(limits.maxUserBufferedBytes)) {
      logger.warn(
        { userId: view.userId, buffered: conn.ws.bufferedAmount },
        'board: slow consumer closed (user over its unsent-bytes budget)',
      );
      this.slowClosed += 1;
      this.deps.detach(conn);
      conn.ws.close(HUB_CLOSE_CODES.slowConsumer, 'slow consumer');
      // A reader that stopped never reads the close frame behind its backlog:
      // cut it after the grace so the memory is freed now, not at ws's 30 s.
      conn.closeTimer = clock.setTimeout(() => conn.ws.terminate(), limits.slowCloseGraceMs);
    }
  }
}
