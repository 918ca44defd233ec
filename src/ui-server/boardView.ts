/**
 * One view of the board (one user, or the admin's view of everyone) and what
 * is shared by every socket of it: the patch log, the snapshot frame, the
 * subscribe budget and the unsent-bytes budget. Budgets are the view's, not a
 * socket's, because a user who opens more sockets must not get more of the
 * node: 30 sockets × 40 subscribes on a 400-card board used to stall the
 * event loop for seconds inside per-socket limits.
 */
import type { WebSocket } from 'ws';
import type { BoardCard } from '../board/boardPort.js';
import type { ResumePoint } from '../board/boardProtocol.js';
import { PatchLog } from './patchLog.js';
import {
  type BucketLimits,
  fullBucket,
  msUntilToken,
  type TokenBucket,
  take,
} from './tokenBucket.js';

/** One board socket as the hub keeps it. */
export interface BoardConnection {
  ws: WebSocket;
  view: BoardView;
  /** The socket's own frame budget (flood limit). */
  bucket: TokenBucket;
  strikes: number;
  alive: boolean;
  /** The cut that follows a 4008 close, if one was given. */
  closeTimer: unknown;
}

/** A subscribe that waits for the view's budget: the latest one per socket, in arrival order. */
type Pending = Map<BoardConnection, ResumePoint | undefined>;

/** A view's shared state. */
export class BoardView {
  readonly log: PatchLog;
  /** Every open socket of the view, subscribed or not (they all share the byte budget). */
  readonly connections = new Set<BoardConnection>();
  readonly subscribers = new Set<BoardConnection>();
  readonly pending: Pending = new Map();
  /** The timer that serves `pending` when the budget refills. */
  drainTimer: unknown = null;
  private snapshot: { seq: number; frame: Buffer } | null = null;
  private bucket: TokenBucket;

  constructor(
    readonly userId: string | null,
    epoch: string,
    resumeBuffer: number,
    private readonly subscribeLimits: BucketLimits,
    now: number,
  ) {
    this.log = new PatchLog(epoch, resumeBuffer);
    this.bucket = fullBucket(subscribeLimits, now);
  }

  /** Appends a patch; the cached snapshot is stale from now on and is let go. */
  append(render: (seq: number) => string): string {
    this.snapshot = null;
    return this.log.append(render).frame;
  }

  /**
   * The snapshot frame at the log's current seq, serialised once per (view,
   * seq) and shared by every socket that subscribes before the next patch.
   * The read is synchronous, so no patch can fall between it and the seq.
   */
  snapshotFrame(cards: (userId: string | null) => BoardCard[]): Buffer {
    const seq = this.log.seq;
    if (this.snapshot?.seq !== seq) {
      const frame = JSON.stringify({
        type: 'snapshot',
        epoch: this.log.epoch,
        seq,
        cards: cards(this.userId),
      });
      this.snapshot = { seq, frame: Buffer.from(frame) };
    }
    return this.snapshot.frame;
  }

  /** Takes one subscribe from the view's budget. */
  takeSubscribe(now: number): boolean {
    const taken = take(this.bucket, this.subscribeLimits, now);
    this.bucket = taken.bucket;
    return taken.allowed;
  }

  /** When the next subscribe fits the budget. */
  msUntilSubscribe(now: number): number {
    return msUntilToken(this.bucket, this.subscribeLimits, now);
  }

  /** Bytes queued over every socket of the view. */
  buffered(): number {
    let total = 0;
    for (const c of this.connections) total += c.ws.bufferedAmount;
    return total;
  }

  /**
   * The sockets to close so the view's unsent bytes fit `budget`: the ones
   * furthest behind first, so a reader that keeps up is the last to go.
   */
  overBudget(budget: number): BoardConnection[] {
    let total = this.buffered();
    if (total <= budget) return [];
    const slowest = [...this.connections].sort((a, b) => b.ws.bufferedAmount - a.ws.bufferedAmount);
    const out: BoardConnection[] = [];
    for (const c of slowest) {
      if (total <= budget) break;
      total -= c.ws.bufferedAmount;
      out.push(c);
    }
    return out;
  }

  /** Drops every waiting subscribe and its timer (the server is closing). */
  stopWaiting(clock: { clearTimeout(handle: unknown): void }): void {
    clock.clearTimeout(this.drainTimer);
    this.drainTimer = null;
    this.pending.clear();
  }

  /** Forgets a socket. */
  remove(conn: BoardConnection): void {
    this.connections.delete(conn);
    this.subscribers.delete(conn);
    this.pending.delete(conn);
  }
}
