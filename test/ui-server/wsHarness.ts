/**
 * Helpers for the UI server's tests: a manual clock, a raw `ws` client that
 * queues the frames it receives, and a server over the fake board.
 */
import { pino } from 'pino';
import { WebSocket } from 'ws';
import type { BoardCard, BoardCommands, BoardSource } from '../../src/board/boardPort.js';
import {
  BEARER_SUBPROTOCOL_PREFIX,
  type ServerFrame,
  SUBPROTOCOL,
} from '../../src/board/boardProtocol.js';
import {
  type BoardWindow,
  COLUMNS,
  type ColumnCounts,
  matchesFilter,
  orderOf,
  rangeOf,
} from '../../src/board/boardWindow.js';
import { createUiServer, type UiServer } from '../../src/ui-server/createUiServer.js';
import { createInspector } from '../../src/ui-server/inspector/createInspector.js';
import {
  systemClock,
  type UiServerClock,
  type UiServerLimits,
  type UiServerLogger,
} from '../../src/ui-server/uiServerOptions.js';
import { FakeBoard } from '../support/fakeBoard.js';

export const TOKENS = {
  users: { alice: 'alice-token-0123456789', bob: 'bob-token-0123456789ab' },
  admin: 'admin-token-0123456789',
};
export const ALICE = 'alice-token-0123456789';
export const BOB = 'bob-token-0123456789ab';
export const ADMIN = TOKENS.admin;

/** A clock that moves only when told; intervals and timeouts fire on `advance`, in time order. */
export class ManualClock implements UiServerClock {
  t = Date.parse('2026-11-01T10:00:00Z');
  private timers = new Map<number, { fn: () => void; every: number | null; next: number }>();
  private ids = 0;
  now = () => this.t;
  setInterval(fn: () => void, ms: number): unknown {
    return this.arm(fn, ms, ms);
  }
  clearInterval(handle: unknown): void {
    this.timers.delete(handle as number);
  }
  setTimeout(fn: () => void, ms: number): unknown {
    return this.arm(fn, ms, null);
  }
  clearTimeout(handle: unknown): void {
    this.timers.delete(handle as number);
  }
  /** Timers armed and not yet fired or cleared. */
  pending(): number {
    return this.timers.size;
  }
  advance(ms: number): void {
    const end = this.t + ms;
    for (;;) {
      const due = [...this.timers.entries()]
        .filter(([, i]) => i.next <= end)
        .sort(([, a], [, b]) => a.next - b.next)[0];
      if (due === undefined) break;
      const [id, timer] = due;
      this.t = timer.next;
      if (timer.every === null) this.timers.delete(id);
      else timer.next += timer.every;
      timer.fn();
    }
    this.t = end;
  }
  private arm(fn: () => void, ms: number, every: number | null): number {
    const id = ++this.ids;
    this.timers.set(id, { fn, every, next: this.t + Math.max(0, ms) });
    return id;
  }
}

export interface Harness {
  server: UiServer;
  board: FakeBoard;
  clock: ManualClock;
}

/**
 * A server over the fake board. With `realClock` (the bench) the server runs
 * on the system clock and `clock` drives nothing.
 */
export async function startHarness(
  limits: Partial<UiServerLimits> = {},
  board?: FakeBoard,
  opts: { realClock?: boolean } = {},
): Promise<Harness> {
  const clock = new ManualClock();
  const fake = board ?? new FakeBoard({ maxRunning: 2, now: clock.now });
  const server = await createUiServer({
    source: fake,
    commands: fake,
    tokens: TOKENS,
    port: 0,
    host: '127.0.0.1',
    clock: opts.realClock ? systemClock : clock,
    limits,
    logger: pino({ level: 'silent' }),
  });
  return { server, board: fake, clock };
}

/** A server over a fresh fake board on the real clock, with the inspector mounted. */
export function serveWithInspector(
  logger: UiServerLogger,
  limits: Partial<UiServerLimits> = {},
): Promise<UiServer> {
  const board = new FakeBoard({ maxRunning: 2 });
  return createUiServer({
    source: board,
    commands: board,
    tokens: TOKENS,
    port: 0,
    host: '127.0.0.1',
    logger,
    limits,
    inspector: createInspector({ logger }),
  });
}

const DEADLINE_MS = 3000;

/** A raw protocol client: frames are queued and taken in order with a deadline. */
export class RawClient {
  readonly frames: ServerFrame[] = [];
  private waiters: Array<() => void> = [];
  closed: Promise<{ code: number; reason: string }>;
  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      this.frames.push(JSON.parse(String(data)) as ServerFrame);
      for (const w of this.waiters.splice(0)) w();
    });
    this.closed = new Promise((resolve) => {
      ws.on('close', (code, reason) => resolve({ code, reason: String(reason) }));
    });
  }

  static async open(
    url: string,
    token: string | null,
    opts: { viaProtocol?: boolean; autoPong?: boolean } = {},
  ): Promise<RawClient> {
    const protocols = [SUBPROTOCOL];
    const headers: Record<string, string> = {};
    if (token !== null && opts.viaProtocol) protocols.push(BEARER_SUBPROTOCOL_PREFIX + token);
    else if (token !== null) headers.authorization = `Bearer ${token}`;
    const ws = new WebSocket(url, protocols, { headers, autoPong: opts.autoPong ?? true });
    const client = new RawClient(ws);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    await client.next('hello');
    return client;
  }

  /** The next frame (of `type`, if given, failing on any other), within the deadline. */
  async next<T extends ServerFrame['type']>(type?: T): Promise<Extract<ServerFrame, { type: T }>> {
    const deadline = Date.now() + DEADLINE_MS;
    while (this.frames.length === 0) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no frame within ${DEADLINE_MS} ms (wanted ${type ?? 'any'})`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    const frame = this.frames.shift()!;
    if (type !== undefined && frame.type !== type) {
      throw new Error(`expected ${type}, got ${JSON.stringify(frame)}`);
    }
    return frame as Extract<ServerFrame, { type: T }>;
  }

  send(frame: unknown): void {
    this.ws.send(typeof frame === 'string' ? frame : JSON.stringify(frame));
  }

  /**
   * Round trip: every frame the server sent before answering is queued by the
   * time this resolves. Returns the frames before the pong.
   */
  async sync(): Promise<ServerFrame[]> {
    const id = `sync-${Math.random()}`;
    this.send({ type: 'ping', id });
    const before: ServerFrame[] = [];
    for (;;) {
      const f = await this.next();
      if (f.type === 'pong' && f.id === id) return before;
      before.push(f);
    }
  }

  close(): void {
    this.ws.close();
  }
}

/** Applies frames like the read model: a map from task id to card, and the counts. */
export function applyFrames(
  state: { seq: number; cards: Map<string, BoardCard>; counts?: ColumnCounts },
  frames: ServerFrame[],
): void {
  for (const f of frames) {
    if (f.type === 'snapshot') {
      state.seq = f.seq;
      state.cards = new Map(f.cards.map((c) => [c.taskId, c]));
      state.counts = f.counts;
    } else if (f.type === 'update') {
      if (f.seq <= state.seq) throw new Error(`update ${f.seq} after ${state.seq}`);
      state.seq = f.seq;
      for (const id of f.removed) state.cards.delete(id);
      for (const c of f.cards) state.cards.set(c.taskId, c);
      for (const [id, position] of Object.entries(f.positions ?? {})) {
        const card = state.cards.get(id);
        if (card?.queued === null || card === undefined)
          throw new Error(`update ${f.seq}: a position for ${id}, which is not a queued card held`);
        state.cards.set(id, { ...card, queued: { ...card.queued, position } });
      }
      for (const [id, atCap] of Object.entries(f.atCap ?? {})) {
        const card = state.cards.get(id);
        if (card?.queued === null || card === undefined)
          throw new Error(`update ${f.seq}: an atCap for ${id}, which is not a queued card held`);
        state.cards.set(id, { ...card, queued: { ...card.queued, atCap } });
      }
      if (f.counts) state.counts = f.counts;
    }
  }
}

/** The cards of every update in `frames`, in order. */
export const updatedCards = (frames: ServerFrame[]): BoardCard[] =>
  frames.flatMap((f) => (f.type === 'update' ? f.cards : []));

/**
 * What a window of `cards` should hold, cut from the whole list: the model
 * the server's windows are checked against.
 */
export function expectedWindow(
  cards: readonly BoardCard[],
  window: BoardWindow,
): { cards: BoardCard[]; counts: ColumnCounts } {
  const kept = cards.filter((c) => matchesFilter(c, window.filter ?? {}));
  const out = new Map<string, BoardCard>();
  const counts = { queued: 0, running: 0, done: 0, failed: 0 };
  for (const column of COLUMNS) {
    const list = kept.filter((c) => c.column === column).sort(orderOf(column));
    counts[column] = list.length;
    const { offset, limit } = rangeOf(window, column);
    for (const c of list.slice(offset, offset + limit)) out.set(c.taskId, c);
  }
  for (const id of window.watch ?? []) {
    const c = cards.find((x) => x.taskId === id);
    if (c) out.set(id, c);
  }
  return { cards: byTask([...out.values()]), counts };
}

export const byTask = (cards: BoardCard[]) =>
  [...cards].sort((a, b) => a.taskId.localeCompare(b.taskId));

export const spec = (title: string) => ({ title, image: 'alpine:3', command: ['echo', title] });

/** A server on a free port over `source` (a runtime), silent. */
export function serveSource(
  source: BoardSource & BoardCommands,
  limits: Partial<UiServerLimits> = {},
): Promise<UiServer> {
  return createUiServer({
    source,
    commands: source,
    tokens: TOKENS,
    port: 0,
    host: '127.0.0.1',
    logger: pino({ level: 'silent' }),
    limits,
  });
}

/** A viewer's socket subscribed to its window, and what it holds from the frames so far. */
export interface WindowViewer {
  token: string;
  userId: string | null;
  window: BoardWindow;
  c: RawClient;
  state: { seq: number; cards: Map<string, BoardCard>; counts?: ColumnCounts };
}

/** Opens one socket per view, subscribes each to its window and takes its snapshot. */
export async function openWindows(
  url: string,
  views: ReadonlyArray<{ token: string; userId: string | null; window: BoardWindow }>,
  opened: RawClient[],
): Promise<WindowViewer[]> {
  const live: WindowViewer[] = [];
  for (const v of views) {
    const c = await RawClient.open(url, v.token);
    opened.push(c);
    c.send({ type: 'subscribe', v: 1, window: v.window });
    const state: WindowViewer['state'] = { seq: -1, cards: new Map() };
    applyFrames(state, [await c.next('snapshot')]);
    live.push({ ...v, c, state });
  }
  return live;
}

/** Applies what `v`'s socket was sent since; returns the cards it holds, in task order, and what the source says it should. */
export async function syncWindow(v: WindowViewer, sourceCards: BoardCard[]) {
  applyFrames(v.state, await v.c.sync());
  return {
    held: byTask([...v.state.cards.values()]),
    counts: v.state.counts,
    want: expectedWindow(sourceCards, v.window),
  };
}
