/**
 * Budgets per user, over all their sockets: subscribes (a token bucket keyed
 * by the view, not the socket), the snapshot built once per (window, seq) and
 * shared, and the unsent bytes, over which the slowest sockets are closed
 * with 4008. Driven on fake sockets and the manual clock, so every limit is
 * hit exactly.
 */
import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Principal } from '../../src/ui-server/authenticate.js';
import { BoardHub, HUB_CLOSE_CODES } from '../../src/ui-server/boardHub.js';
import { BoardView } from '../../src/ui-server/boardView.js';
import { UI_SERVER_DEFAULTS, type UiServerLimits } from '../../src/ui-server/uiServerOptions.js';
import { FakeBoard } from '../support/fakeBoard.js';
import { FakeSocket } from './fakeSocket.js';
import { ManualClock, spec } from './wsHarness.js';

const alice: Principal = { kind: 'user', userId: 'alice' };
const bob: Principal = { kind: 'user', userId: 'bob' };
const admin: Principal = { kind: 'admin' };
let hub: BoardHub | undefined;
afterEach(() => hub?.close());

function start(limits: Partial<UiServerLimits> = {}) {
  const clock = new ManualClock();
  const board = new FakeBoard({ maxRunning: 5, now: clock.now });
  hub = new BoardHub({
    source: board,
    userIds: ['alice', 'bob'],
    epoch: 'e1',
    limits: { ...UI_SERVER_DEFAULTS, floodBurst: 1000, ...limits },
    clock,
    logger: pino({ level: 'silent' }),
  });
  const h = hub;
  const socket = (who: Principal) => {
    const s = new FakeSocket();
    h.attach(s.ws, who);
    return s;
  };
  return { clock, board, hub: h, socket };
}
const subscribe = (s: FakeSocket) => s.receive({ type: 'subscribe', v: 1 });
/** Lets the hub's flush (one per turn of the loop's changes) run. */
const flushed = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('the subscribe budget is the user’s, not the socket’s', () => {
  it('serves the burst over all sockets, then one per refill, the latest per socket', () => {
    const { clock, socket } = start({ subscribeBurst: 3, subscribePerSecond: 1 });
    const [s1, s2, s3] = [socket(alice), socket(alice), socket(alice)];
    for (const s of [s1!, s2!, s3!]) subscribe(s);
    expect([s1, s2, s3].map((s) => s!.frames('snapshot').length)).toEqual([1, 1, 1]);
    subscribe(s1!);
    subscribe(s2!);
    subscribe(s1!);
    expect(s1!.frames('snapshot')).toHaveLength(1);
    clock.advance(1000);
    expect(s1!.frames('snapshot')).toHaveLength(2);
    expect(s2!.frames('snapshot')).toHaveLength(1);
    clock.advance(1000);
    expect(s2!.frames('snapshot')).toHaveLength(2);
    clock.advance(10_000);
    // s1's two waiting subscribes were one: nothing more came.
    expect(s1!.frames('snapshot')).toHaveLength(2);
  });

  it('leaves other users and the admin their own budget', () => {
    const { socket } = start({ subscribeBurst: 1, subscribePerSecond: 1 });
    const a = socket(alice);
    subscribe(a);
    subscribe(a);
    const b = socket(bob);
    const root = socket(admin);
    subscribe(b);
    subscribe(root);
    expect([a, b, root].map((s) => s.frames('snapshot').length)).toEqual([1, 1, 1]);
  });

  it('forgets a waiting subscribe when its socket closes', () => {
    const { clock, socket } = start({ subscribeBurst: 1, subscribePerSecond: 1 });
    const a = socket(alice);
    subscribe(a);
    const b = socket(alice);
    subscribe(b);
    b.terminate();
    clock.advance(5000);
    expect(b.frames('snapshot')).toEqual([]);
    expect(clock.pending()).toBe(1); // only the heartbeat
  });
});

describe('a snapshot is built once per (window, seq) and shared', () => {
  it('sends the same bytes to every socket of one window at one seq, never reading the source again', async () => {
    const { board, socket } = start();
    await board.createTask('alice', spec('a1'));
    await flushed();
    const cards = vi.spyOn(board, 'cards');
    const sockets = [socket(alice), socket(alice), socket(alice)];
    for (const s of sockets) subscribe(s);
    expect(new Set(sockets.map((s) => s.sent.at(-1))).size).toBe(1);
    const seq = sockets[0]!.frames('snapshot').at(-1)!.seq as number;
    await board.createTask('alice', spec('a2'));
    await flushed();
    subscribe(sockets[0]!);
    subscribe(sockets[1]!);
    expect(sockets[0]!.sent.at(-1)).toBe(sockets[1]!.sent.at(-1));
    expect(sockets[0]!.frames('snapshot').at(-1)).toMatchObject({ seq: seq + 1 });
    // The views were read at start, each with its user's filter; changes keep them.
    expect(cards).not.toHaveBeenCalled();
  });
});

describe('the unsent-bytes budget is the user’s', () => {
  it('closes the slowest sockets with 4008 until the user fits, then cuts them after the grace', async () => {
    const { board, clock, hub, socket } = start({
      maxUserBufferedBytes: 10_000,
      maxBufferedBytes: 1_000_000,
      slowCloseGraceMs: 500,
    });
    await board.createTask('alice', spec('a'));
    const fast = socket(alice);
    const slow = [socket(alice), socket(alice)];
    const other = socket(bob);
    for (const s of [fast, ...slow, other]) subscribe(s);
    for (const s of slow) s.stalled = true;
    other.stalled = true;
    for (let i = 0; i < 40; i++) {
      board.output('t1', `line ${i} ${'x'.repeat(200)}`);
      await flushed();
    }
    // Each slow socket alone is far under the per-socket 1 MB guard.
    expect(slow.map((s) => s.closedWith)).toEqual([4008, 4008]);
    expect(fast.closedWith).toBeNull();
    // Bob's stalled socket holds nothing of alice's: his budget is untouched.
    expect(other.closedWith).toBeNull();
    expect(hub.stats().slowConsumersClosed).toBe(2);
    const before = fast.frames('update').length;
    board.output('t1', 'after');
    await flushed();
    expect(fast.frames('update')).toHaveLength(before + 1);
    expect(slow.map((s) => s.terminated)).toEqual([false, false]);
    clock.advance(500);
    expect(slow.map((s) => s.terminated)).toEqual([true, true]);
    expect(HUB_CLOSE_CODES.slowConsumer).toBe(4008);
  });

  it('closes only as many as it takes, the furthest behind first', () => {
    const { socket, hub } = start({ maxUserBufferedBytes: 1000 });
    const [a, b, c] = [socket(alice), socket(alice), socket(alice)];
    a!.bufferedAmount = 400;
    b!.bufferedAmount = 900;
    c!.bufferedAmount = 300;
    subscribe(c!);
    expect([a, b, c].map((s) => s!.closedWith)).toEqual([null, 4008, null]);
    expect(hub.stats().connections).toBe(2);
  });
});

describe('a frame the hub fails on', () => {
  it('closes that socket with 1011; the others carry on', () => {
    const { socket } = start();
    const bad = socket(alice);
    const good = socket(bob);
    vi.spyOn(BoardView.prototype, 'join').mockImplementationOnce(() => {
      throw new Error('a bug');
    });
    subscribe(bad);
    expect(bad.closedWith).toBe(1011);
    subscribe(good);
    expect(good.frames('snapshot')).toHaveLength(1);
  });
});
