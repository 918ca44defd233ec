/**
 * The node's side of the dispatch engine: an outbox, not a per-job actor
 * dance. Every write a caller hands in (enqueue, retry, handle, finish,
 * cancel, cap) waits here until the next tick, and every tick carries all
 * of them plus the grants this node has room for, in one statement and one
 * commit (`tick` in src/db, the SQL function `rt_tick`). A tick leaves once
 * a turn of the event loop brought no new op (at most `coalesceTurns`
 * turns; src/actors/dispatcherDeparture.ts, dispatcherDepartureWait.ts),
 * so a short run's handle and finish ride one tick and its slot is granted
 * again in it. At most `maxInFlight` ticks are out at once (1 by
 * default); whatever arrives meanwhile rides the next one, so batches grow
 * with load and there is no timer at low load (opportunistic group
 * commit). A reply sends the next tick before the node handles it, so the
 * database works on that one while the node works on the reply: one tick
 * out already keeps both sides busy. A tick asks only for room no tick in
 * flight has asked for already.
 *
 * A caller's promise settles only after its tick committed. A tick that
 * fails on a transient error (the server restarting, a timeout) is sent
 * again after a capped backoff with the same ops (dispatcherOutage.ts):
 * ops are idempotent, so a tick whose commit happened but whose reply was
 * lost answers the same outcomes the second time, and `resync` recovers
 * grants it made unseen.
 * A tick that fails for any other reason is split: its ops go one per tick
 * until the bad one is found, and only that caller sees the error.
 *
 * A tick that fails because the store was closed (`StoreClosedError`: the
 * application closed it under the running node) ends the dispatch: a
 * closed store never answers again, so retrying would only spin until
 * `stop()`. Every op waiting, and every later one, is answered with that
 * error at once, `onError` hears it once, and no tick is sent again.
 */

import { storeClosedIn } from '../db/errors.js';
import type { Session, Task } from '../db/rows.js';
import type { TickInput, TickOp, TickOutcome, TickResult } from '../db/tickTypes.js';
import { type Entry, endsHold } from './dispatcherBatch.js';
import { waitToDepart } from './dispatcherDepartureWait.js';
import { afterFailure } from './dispatcherFailure.js';
import { StoreOutage } from './dispatcherOutage.js';
import { Outbox } from './dispatcherOutbox.js';
import { asksAgain, freedBy, roomToAsk } from './dispatcherRoom.js';
import { type DispatcherOptions, DispatcherStoppedError, type OpInput } from './dispatcherTypes.js';

export {
  type DispatchClock,
  type DispatcherOptions,
  DispatcherStoppedError,
  DispatchUnavailableError,
} from './dispatcherTypes.js';

/** Turns of the loop a tick waits at most while ops keep arriving (dispatcherDeparture.ts). */
export const DEFAULT_COALESCE_TURNS = 8;

export class Dispatcher {
  private readonly outbox = new Outbox();
  private inFlight = 0;
  /** Grants asked for by ticks in flight: room not to ask for twice. */
  private reserved = 0;
  private scheduled = false;
  /** The run of failed ticks under way, if any: its backoff, its clock, its answers. */
  private readonly outage: StoreOutage;
  private resync = false;
  private stopped = false;
  /** The tick error that found the store closed: every op from then on is answered with it. */
  private closedBy: { error: unknown } | null = null;
  private seq = 0;
  /** Another tick could grant something (work arrived, room freed, the last tick filled its want). */
  private dirty = true;
  /** Sessions this node holds (granted or adopted), with the epoch it holds them at. */
  private readonly held = new Map<string, number>();
  private lastTick = 0;
  /** Callers of `afterCurrentTick`, told when the tick they waited for settled. */
  private tickWaiters: Array<() => void> = [];

  constructor(private readonly o: DispatcherOptions) {
    this.outage = new StoreOutage(o);
  }

  /**
   * Resolves once the tick in flight, or the one waiting to leave, has
   * settled (its reply handled, or its failure), at once when there is none.
   * Work that would compete with it for the node's thread waits for this:
   * the board's load at boot (src/actors/runtime.ts).
   */
  afterCurrentTick(): Promise<void> {
    if (!this.scheduled && this.inFlight === 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      this.tickWaiters.push(resolve);
    });
  }

  /** Queues one write for the next tick; resolves with its outcome once that tick committed. */
  submit(op: OpInput): Promise<TickOutcome> {
    return this.enter(op, false);
  }

  /**
   * A caller's command (submit, cancel, retry, cap): as `submit`, but once
   * the store has failed for `commandOutageMs` it is answered
   * `unavailable` instead of waiting (at once if it arrives then), and is
   * never sent. Its caller can act on that; a runner's finish cannot, and
   * waits for the store.
   */
  command(op: OpInput): Promise<TickOutcome> {
    return this.enter(op, true);
  }

  private enter(op: OpInput, command: boolean): Promise<TickOutcome> {
    if (this.stopped) return Promise.reject(new DispatcherStoppedError());
    if (this.closedBy !== null) return Promise.reject(this.closedBy.error);
    const full = { ...op, ref: String(++this.seq) } as TickOp;
    try {
      this.o.validate?.(full);
    } catch (error) {
      return Promise.reject(error);
    }
    const now = this.o.clock.now();
    if (command && this.outage.answersCommands(now))
      return Promise.reject(this.outage.unavailable(full.op, false, now));
    return new Promise<TickOutcome>((resolve, reject) => {
      this.outbox.push({ op: full, at: now, solo: false, command, resolve, reject });
      this.schedule();
    });
  }

  /** Something changed elsewhere (a NOTIFY, a poll that saw a newer tick): a tick may grant. */
  poke(tick?: number): void {
    if (tick !== undefined && tick <= this.lastTick) return;
    this.dirty = true;
    this.schedule();
  }

  /** Counts a session as held by this node at `epoch` (an adopted run, a re-held grant). */
  hold(sessionId: string, epoch: number): void {
    this.held.set(sessionId, epoch);
  }

  /** Stops counting a session (its runner ended). Frees room: a tick may grant. */
  drop(sessionId: string): void {
    if (this.held.delete(sessionId)) this.poke();
  }

  /** The epoch this node holds `sessionId` at, or undefined. */
  heldEpoch(sessionId: string): number | undefined {
    return this.held.get(sessionId);
  }

  /** Sessions held now. */
  holding(): number {
    return this.held.size;
  }

  /** The last tick number this node saw (its own or another node's). */
  seenTick(): number {
    return this.lastTick;
  }

  /** Ops waiting for a tick. */
  backlog(): number {
    return this.outbox.size;
  }

  /** Rejects every op not yet sent; a tick in flight still answers its callers. Idempotent. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.wake();
    this.outage.cancelRetry();
    for (const e of this.outbox.drain()) e.reject(new DispatcherStoppedError(e.sent === true));
  }

  private want(freed = 0): number {
    if (!this.o.mayGrant()) return 0;
    return roomToAsk(
      { localMax: this.o.localMax, held: this.held.size, reserved: this.reserved },
      freed,
    );
  }

  private full(): boolean {
    if (this.inFlight >= (this.o.maxInFlight ?? 1)) return true;
    // Solo ops go out alone anyway: no point waiting for company.
    return (
      this.inFlight > 0 && this.outbox.size < (this.o.pipelineAt ?? 16) && !this.outbox.soloNext()
    );
  }

  private schedule(): void {
    if (this.scheduled || this.full() || this.stopped || this.outage.retrying) return;
    if (this.closedBy !== null) return;
    if (this.outbox.size === 0 && !(this.dirty && this.want() > 0)) return;
    this.scheduled = true;
    // The wait counts as in flight: whoever settles the node waits for the tick it leads to.
    let leave = () => {};
    void this.o.track(
      new Promise<void>((resolve) => {
        leave = resolve;
      }),
    );
    waitToDepart({
      pending: () => this.outbox.size,
      leaveNow: () => this.stopped,
      maxOps: this.o.maxOpsPerTick,
      maxTurns: this.o.coalesceTurns ?? DEFAULT_COALESCE_TURNS,
      nextTurn: this.o.nextTurn ?? setImmediate,
      leave: () => {
        this.scheduled = false;
        leave();
        if (!this.full() && !this.stopped && !this.outage.retrying) this.run();
        // Nothing left after all (a tick in flight wakes them as it settles).
        if (this.inFlight === 0) this.wake();
      },
    });
  }

  private run(): void {
    if (this.outbox.size === 0 && !(this.dirty && this.want() > 0)) return;
    const batch = this.outbox.take(this.o.maxOpsPerTick);
    for (const e of batch) e.sent = true;
    // A finish in this batch frees its slot before the tick grants (the
    // function applies finishes first), so its room is asked for now.
    const ops = batch.map((e) => e.op);
    const want = this.want(freedBy(ops, this.held));
    const input: TickInput = {
      owner: this.o.owner,
      now: new Date(this.o.clock.now()),
      globalCap: this.o.caps.maxRunning,
      defaultUserCap: this.o.caps.defaultUserCap,
      want,
      ops,
      ...(this.resync ? { resync: true } : {}),
    };
    this.dirty = false;
    this.inFlight += 1;
    this.reserved += want;
    const settle = () => {
      this.inFlight -= 1;
      this.reserved -= want;
    };
    void this.o
      .track(this.o.tick(input))
      .then(
        (result) => {
          settle();
          this.succeeded(batch, input, result);
        },
        (error: unknown) => {
          settle();
          this.failed(batch, error);
        },
      )
      .finally(() => {
        this.wake();
        this.schedule();
      });
  }

  private wake(): void {
    if (this.tickWaiters.length === 0) return;
    const waiters = this.tickWaiters;
    this.tickWaiters = [];
    for (const w of waiters) w();
  }

  private succeeded(batch: Entry[], input: TickInput, result: TickResult): void {
    this.outage.committed();
    this.resync = false;
    if (result.tick > this.lastTick) this.lastTick = result.tick;
    const byRef = new Map(result.outcomes.map((x) => [x.ref, x]));
    const answers: [Entry, TickOutcome][] = [];
    for (const e of batch) {
      const outcome = byRef.get(e.op.ref);
      // The function answers every ref; a missing one is a broken reply, not a success.
      if (outcome === undefined) {
        e.reject(new Error(`rt_tick answered no outcome for op ${e.op.op} #${e.op.ref}`));
        continue;
      }
      this.account(e.op);
      answers.push([e, outcome]);
    }
    for (const g of result.granted) this.held.set(g.session.id, g.session.epoch);
    // Room freed or asked for that no grant has seen yet: see asksAgain.
    if (asksAgain(input, result.granted.length)) this.dirty = true;
    // The next tick leaves now, with what waits, before this one's callers
    // and grants are handled (that work would otherwise keep the database idle).
    this.sendNow();
    for (const [e, outcome] of answers) e.resolve(outcome);
    // The tick's own changes first, then its grants: a re-queued attempt
    // granted in the tick that failed its predecessor comes after it.
    try {
      this.o.onTick(
        result,
        batch.map((e) => e.op),
      );
    } catch (error) {
      this.o.onError(error);
    }
    for (const g of result.owned ?? []) {
      if (this.held.has(g.session.id)) continue;
      this.held.set(g.session.id, g.session.epoch);
      this.emitGrant(g);
    }
    for (const g of result.granted) this.emitGrant(g);
  }

  /** Starts the next tick synchronously when one may go (schedule() waits for a microtask). */
  private sendNow(): void {
    if (this.scheduled || this.full() || this.stopped || this.outage.retrying) return;
    this.run();
  }

  private emitGrant(g: { session: Session; task: Task }): void {
    try {
      this.o.onGranted(g);
    } catch (error) {
      this.o.onError(error);
    }
  }

  /**
   * Keeps `held` true to the rows: a finished or cancelled session is no
   * longer ours. (Arrivals need no second tick: the tick that applied them
   * granted after applying them, with the room it had.)
   */
  private account(op: TickOp): void {
    if (endsHold(op)) this.held.delete(op.sessionId);
  }

  private failed(batch: Entry[], error: unknown): void {
    if (storeClosedIn(error) !== null) {
      this.closed(batch, error);
      return;
    }
    const transient = this.o.isTransient(error);
    this.outage.failed(error, transient);
    // Unknown outcome: the commit may have happened. Same ops again; ask for what we own.
    this.resync = true;
    const decided = afterFailure(batch, transient);
    decided.rejected?.reject(error);
    if (decided.report) this.o.onError(error);
    // Stopped while the tick was out: no tick will carry them again, and
    // the outbox was drained already, so they are answered here (kept,
    // their callers would wait for ever).
    if (this.stopped) {
      for (const e of decided.requeued) e.reject(new DispatcherStoppedError(true));
      return;
    }
    this.outbox.unshift(decided.requeued);
    this.outage.answerLate(this.outbox, error);
    this.outage.retryAfterBackoff(() => {
      this.dirty = true;
      this.schedule();
    });
  }

  /**
   * The store was closed under the node: no tick will ever commit again.
   * The batch's callers and every op waiting are answered with the error
   * (commandError makes it `unavailable` for a caller); a second tick out
   * that fails the same way finds the dispatch ended and only answers its own.
   */
  private closed(batch: Entry[], error: unknown): void {
    const first = this.closedBy === null;
    this.closedBy ??= { error };
    for (const e of batch) e.reject(error);
    for (const e of this.outbox.drain()) e.reject(this.closedBy.error);
    if (first) this.o.onError(error);
  }
}
