/**
 * The sender on its own, on fake sockets and the manual clock: a socket too
 * far behind is cut, a user over its unsent-bytes budget loses its slowest
 * sockets (4008, then cut after the grace), and every frame is counted. The
 * same budgets through the hub and real frames: userBudget.test.ts.
 */
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { BoardSender, HUB_CLOSE_CODES } from '../../src/ui-server/boardSender.js';
import { type BoardConnection, BoardView } from '../../src/ui-server/boardView.js';
import { LinePlaces } from '../../src/ui-server/linePlaces.js';
import { fullBucket } from '../../src/ui-server/tokenBucket.js';
import { UI_SERVER_DEFAULTS } from '../../src/ui-server/uiServerOptions.js';
import { FakeSocket } from './fakeSocket.js';
import { ManualClock } from './wsHarness.js';

function start(limits: { maxBufferedBytes: number; maxUserBufferedBytes: number }) {
  const clock = new ManualClock();
  const view = new BoardView(
    'alice',
    'e1',
    [],
    { burst: 10, perSecond: 1 },
    clock.now(),
    new LinePlaces(undefined),
  );
  const detached: BoardConnection[] = [];
  const sender = new BoardSender({
    limits: { ...UI_SERVER_DEFAULTS, ...limits, slowCloseGraceMs: 500 },
    clock,
    logger: pino({ level: 'silent' }),
    detach: (conn) => {
      detached.push(conn);
      view.remove(conn);
    },
  });
  const connect = (buffered = 0) => {
    const s = new FakeSocket();
    s.bufferedAmount = buffered;
    const conn: BoardConnection = {
      ws: s.ws,
      view,
      group: null,
      bucket: fullBucket({ burst: 1, perSecond: 1 }, clock.now()),
      strikes: 0,
      alive: true,
      closeTimer: null,
    };
    view.connections.add(conn);
    return { s, conn };
  };
  return { clock, sender, connect, detached };
}

describe('BoardSender', () => {
  it('sends a frame as JSON text, counts it, and returns what the socket holds unsent', () => {
    const { sender, connect } = start({ maxBufferedBytes: 1000, maxUserBufferedBytes: 10_000 });
    const { s, conn } = connect(40);
    sender.send(conn, { type: 'pong', id: 'a' });
    expect(s.sent).toEqual(['{"type":"pong","id":"a"}']);
    expect(sender.sendRaw(conn, 'x')).toBe(40);
    expect(sender.framesSent).toBe(2);
  });

  it('sends nothing to a socket that is not open', () => {
    const { sender, connect } = start({ maxBufferedBytes: 1000, maxUserBufferedBytes: 10_000 });
    const { s, conn } = connect();
    s.readyState = 2;
    expect(sender.sendRaw(conn, 'x')).toBe(0);
    expect([s.sent, sender.framesSent]).toEqual([[], 0]);
  });

  it('cuts a socket more than maxBufferedBytes behind and forgets it', () => {
    const { sender, connect, detached } = start({
      maxBufferedBytes: 100,
      maxUserBufferedBytes: 10_000,
    });
    const { s, conn } = connect(101);
    expect(sender.sendRaw(conn, 'x')).toBe(0);
    expect(s.terminated).toBe(true);
    expect(detached).toEqual([conn]);
  });

  it("closes the user's slowest sockets with 4008 until the rest fit, then cuts them after the grace", () => {
    const { clock, sender, connect, detached } = start({
      maxBufferedBytes: 10_000,
      maxUserBufferedBytes: 50,
    });
    const slow = connect(80);
    const slower = connect(90);
    const fast = connect(10);
    sender.send(fast.conn, { type: 'pong', id: 'a' });
    expect(detached).toEqual([slower.conn, slow.conn]);
    expect([slower.s.closedWith, slow.s.closedWith, fast.s.closedWith]).toEqual([
      HUB_CLOSE_CODES.slowConsumer,
      HUB_CLOSE_CODES.slowConsumer,
      null,
    ]);
    expect(sender.slowClosed).toBe(2);
    expect(slow.s.terminated).toBe(false);
    clock.advance(500);
    expect([slow.s.terminated, slower.s.terminated, fast.s.terminated]).toEqual([
      true,
      true,
      false,
    ]);
  });

  it('leaves a user within its budget alone', () => {
    const { sender, connect, detached } = start({
      maxBufferedBytes: 10_000,
      maxUserBufferedBytes: 100,
    });
    connect(50);
    const { conn } = connect(50);
    sender.enforceBudget(conn.view);
    expect(detached).toEqual([]);
  });
});
