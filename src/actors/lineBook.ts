/**
 * The node's copy of the users' lines (`user_lines` rows), kept from every
 * tick's reply and from the change feed of other nodes' ticks. It is all a
 * node needs to show exact positions and pool occupancy without holding the
 * queue: a queued session's position is a function of its own key and the
 * lines (src/machines/linePosition.ts), O(users with work), flat in depth.
 */
import type { UserLine } from '../db/tickTypes.js';
import { type LineSummary, positionOf } from '../machines/linePosition.js';
import { userAtCap } from '../machines/userAtCap.js';
import type { RuntimePoolSnapshot } from './runtimeTypes.js';

export class LineBook {
  private readonly lines = new Map<string, UserLine>();
  /** Lines with queued work, rebuilt lazily after a change (positions read it many times). */
  private waiting: LineSummary[] | null = null;
  private listeners = new Set<() => void>();
  private pending = false;
  /** Sessions running over every node, as of the last tick seen. */
  running = 0;
  /** The tick each user's line was last taken as of (kept for emptied lines too: one entry per user). */
  private readonly asOf = new Map<string, number>();
  private runningAsOf = -1;

  /**
   * Takes lines a tick or the feed returned, as of tick `asOf`. Later ticks
   * win: a line (or the running count) already known as of a later tick is
   * kept, since a feed read and a tick's reply travel on different
   * connections and may land in either order. Without `asOf`, applied as is.
   */
  apply(lines: readonly UserLine[], running?: number, asOf?: number): void {
    for (const l of lines) {
      if (asOf !== undefined) {
        if ((this.asOf.get(l.userId) ?? -1) > asOf) continue;
        this.asOf.set(l.userId, asOf);
      }
      if (l.queued === 0 && l.running === 0) this.lines.delete(l.userId);
      else this.lines.set(l.userId, l);
    }
    if (running !== undefined && (asOf === undefined || asOf >= this.runningAsOf)) {
      this.running = running;
      if (asOf !== undefined) this.runningAsOf = asOf;
    }
    if (lines.length === 0 && running === undefined) return;
    this.waiting = null;
    // Positions or running counts moved: tell listeners once per microtask however many ticks landed.
    if (this.pending || this.listeners.size === 0) return;
    this.pending = true;
    queueMicrotask(() => {
      this.pending = false;
      for (const l of this.listeners) l();
    });
  }

  /** Replaces every line (a full read at boot or after the feed lost track). */
  reset(lines: readonly UserLine[], running: number): void {
    this.lines.clear();
    this.asOf.clear();
    this.runningAsOf = -1;
    this.apply(lines, running);
  }

  /** 1-based place of a queued session with this key in the cluster's order. */
  positionOf(turn: number, joinSeq: number): number {
    this.waiting ??= [...this.lines.values()].filter((l) => l.queued > 0);
    return positionOf(this.waiting, { turn, joinSeq });
  }

  line(userId: string): UserLine | undefined {
    return this.lines.get(userId);
  }

  /** The user's running count and cap when they are at it, else null (machines/userAtCap.ts). */
  atCapOf(userId: string): { running: number; max: number } | null {
    return userAtCap(this.lines.get(userId));
  }

  /** Told (on a microtask) after lines changed. */
  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Occupancy for the board and /metrics, by user id. */
  snapshot(maxRunning: number): RuntimePoolSnapshot {
    const users = [...this.lines.values()]
      .sort((a, b) => (a.userId < b.userId ? -1 : a.userId > b.userId ? 1 : 0))
      .map((l) => ({
        userId: l.userId,
        running: l.running,
        queued: l.queued,
        maxRunning: l.hasOverride ? l.maxRunning : null,
      }));
    let queued = 0;
    for (const l of this.lines.values()) queued += l.queued;
    return { maxRunning, running: this.running, queued, users };
  }
}
