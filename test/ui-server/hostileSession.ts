/**
 * A hostile session against a control client, shared by the property test
 * and the bench: one server over a board with large cards, attackers on one
 * user's token (alice) doing what a hostile client does, and a well-behaved
 * control client of another user (bob) whose updates are timed, from the
 * change on the board to the patch in hand.
 */
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { BoardCard } from '../../src/board/boardPort.js';
import type { ServerFrame } from '../../src/board/boardProtocol.js';
import type { UiServerLimits } from '../../src/ui-server/uiServerOptions.js';
import { FakeBoard } from '../support/fakeBoard.js';
import { ALICE, applyFrames, BOB, type Harness, RawClient, startHarness } from './wsHarness.js';

/** One hostile move. */
export type Attack =
  | { kind: 'garbage'; text: string }
  | { kind: 'binary'; bytes: Uint8Array }
  | { kind: 'oversize' }
  | { kind: 'badJson' }
  | { kind: 'unknownType'; type: string }
  | { kind: 'subscribeFlood'; sockets: number; count: number; filtered: boolean }
  | { kind: 'reconnect'; count: number }
  | { kind: 'slowReaders'; count: number }
  | { kind: 'churn'; changes: number }
  | { kind: 'tick'; ms: number };

export interface ArenaOptions {
  limits: Partial<UiServerLimits>;
  /** Alice's cards, each carrying `lines` output lines of 200 characters (20: ~4.3 KB a card). */
  cards: number;
  lines?: number;
  /** The harness's manual clock (tests) or the system clock (bench). */
  realClock: boolean;
}

const ATTACKER = 'alice';
const LINE = 'x'.repeat(200);

export class Arena {
  readonly attackers: RawClient[] = [];
  /** Frames the attackers got that hold a card of someone else. */
  readonly foreign: string[] = [];
  refused = 0;
  /** How the server closed attackers' sockets: close code → count. */
  readonly closes = new Map<number, number>();
  private readonly state = { seq: 0, cards: new Map<string, BoardCard>() };
  private probes = 0;
  private turn = 0;
  private aliceCards: string[] = [];

  private constructor(
    readonly h: Harness,
    readonly control: RawClient,
    private readonly bobTask: string,
  ) {}

  static async start(o: ArenaOptions): Promise<Arena> {
    const board = new FakeBoard({ maxRunning: 2 });
    const h = await startHarness(o.limits, board, { realClock: o.realClock });
    const bob = await board.createTask('bob', { title: 'control', image: 'a', command: ['x'] });
    const control = await RawClient.open(h.server.wsUrl, BOB);
    control.send({ type: 'subscribe', v: 1 });
    const snapshot = await control.next('snapshot');
    const arena = new Arena(h, control, bob.taskId);
    applyFrames(arena.state, [snapshot]);
    for (let i = 0; i < o.cards; i++) {
      const t = await board.createTask(ATTACKER, { title: `a${i}`, image: 'a', command: ['x'] });
      for (let l = 0; l < (o.lines ?? 20); l++) board.output(t.taskId, LINE);
      arena.aliceCards.push(t.taskId);
    }
    return arena;
  }

  /** Times one change of bob's card, from the board to the control's hands (ms). */
  async probe(): Promise<number> {
    const mark = `probe-${++this.probes}`;
    const t0 = performance.now();
    this.h.board.output(this.bobTask, mark);
    for (;;) {
      const frame = await this.control.next();
      this.check('bob', frame);
      applyFrames(this.state, [frame]);
      if (frame.type === 'update' && frame.cards.some((c) => c.lastOutput.at(-1) === mark)) {
        return performance.now() - t0;
      }
    }
  }

  /** The control's read model equals bob's cards on the board. */
  controlInStep(): boolean {
    const board = this.h.board.cards('bob');
    return (
      board.length === this.state.cards.size &&
      board.every((c) => JSON.stringify(c) === JSON.stringify(this.state.cards.get(c.taskId)))
    );
  }

  async attack(a: Attack): Promise<void> {
    const some = () => this.someAttacker();
    switch (a.kind) {
      case 'garbage':
        return (await some())?.send(a.text);
      case 'binary':
        return (await some())?.ws.send(a.bytes);
      case 'oversize':
        return (await some())?.send({ type: 'ping', id: 'x'.repeat(128 * 1024) });
      case 'badJson':
        return (await some())?.send('{"type":"subscribe","v":');
      case 'unknownType':
        return (await some())?.send({ type: a.type, v: 1 });
      case 'subscribeFlood':
        for (let s = 0; s < a.sockets; s++) {
          const c = await this.attackerAt(s);
          for (let i = 0; i < a.count; i++) {
            c?.send({
              type: 'subscribe',
              v: 1,
              ...(a.filtered ? { window: { filter: { text: `a${i}` } } } : {}),
            });
          }
        }
        return;
      case 'reconnect':
        for (let i = 0; i < a.count; i++) {
          this.attackers.shift()?.ws.terminate();
          await this.open();
        }
        return;
      case 'slowReaders':
        for (let i = 0; i < a.count; i++) {
          const c = await this.open();
          if (c === null) return;
          // The TCP socket stops reading: everything sent to it piles up on the server.
          (c.ws as unknown as { _socket: Socket })._socket.pause();
          c.send({ type: 'subscribe', v: 1 });
        }
        return;
      case 'churn':
        for (let i = 0; i < a.changes; i++) {
          const id = this.aliceCards[i % this.aliceCards.length];
          if (id !== undefined) this.h.board.output(id, `${i}${LINE}`);
        }
        return;
      case 'tick':
        return this.h.clock.advance(a.ms);
    }
  }

  /** Checks the attackers' frames for foreign cards, and forgets them. */
  audit(): void {
    for (const c of this.attackers) {
      for (const f of c.frames.splice(0)) this.check(ATTACKER, f);
    }
  }

  async close(): Promise<void> {
    for (const c of this.attackers.splice(0)) c.ws.terminate();
    this.control.ws.terminate();
    await this.h.server.close();
  }

  private check(owner: string, frame: ServerFrame): void {
    const cards = frame.type === 'snapshot' || frame.type === 'update' ? frame.cards : [];
    for (const card of cards) {
      if (card.userId !== owner) this.foreign.push(`${owner} got ${card.userId}'s ${card.taskId}`);
    }
  }

  /** An open attacker, a different one each time, or a new one when none is open. */
  private async someAttacker(): Promise<RawClient | null> {
    const live = this.attackers.filter((c) => c.ws.readyState === c.ws.OPEN);
    this.turn += 1;
    return live.length > 0 ? live[this.turn % live.length]! : this.open();
  }

  /** The `i`-th open attacker, opening sockets up to it (null past the caps). */
  private async attackerAt(i: number): Promise<RawClient | null> {
    const live = this.attackers.filter((c) => c.ws.readyState === c.ws.OPEN);
    return live[i] ?? this.open();
  }

  private async open(): Promise<RawClient | null> {
    try {
      const c = await RawClient.open(this.h.server.wsUrl, ALICE);
      this.attackers.push(c);
      void c.closed.then(({ code }) => this.closes.set(code, (this.closes.get(code) ?? 0) + 1));
      return c;
    } catch {
      // Refused at the connection caps (429), as it should be past them.
      this.refused += 1;
      return null;
    }
  }
}
