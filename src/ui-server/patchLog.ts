/**
 * The ordered patch stream of one view (one user, or the admin's view of
 * everyone): a sequence counter and a bounded ring of the latest patches, so a
 * client that reconnects with its last sequence number gets what it missed,
 * or a fresh snapshot when the ring no longer holds it. No I/O, no clock.
 */

/** A patch as stored: its sequence number and the frame already serialised once. */
export interface LoggedPatch {
  seq: number;
  frame: string;
}

/** What a resuming client gets. */
export type ResumeDecision = { kind: 'replay'; patches: LoggedPatch[] } | { kind: 'snapshot' };

/**
 * A view's patch log. `seq` is the sequence number of the last patch (0 before
 * any); a snapshot taken now is stamped with it.
 *
 * @example
 * ```ts
 * const log = new PatchLog('e1', 2)
 * log.append((seq) => `p${seq}`) // => { seq: 1, frame: 'p1' }
 * log.append((seq) => `p${seq}`) // => { seq: 2, frame: 'p2' }
 * log.append((seq) => `p${seq}`) // => { seq: 3, frame: 'p3' }
 * log.seq // => 3
 * log.resume({ epoch: 'e1', seq: 1 }) // => { kind: 'replay', patches: [{ seq: 2, frame: 'p2' }, { seq: 3, frame: 'p3' }] }
 * log.resume({ epoch: 'e1', seq: 3 }) // => { kind: 'replay', patches: [] }
 * log.resume({ epoch: 'e1', seq: 0 }) // => { kind: 'snapshot' }
 * log.resume({ epoch: 'e1', seq: 9 }) // => { kind: 'snapshot' }
 * log.resume({ epoch: 'other', seq: 3 }) // => { kind: 'snapshot' }
 * ```
 */
export class PatchLog {
  private readonly ring: LoggedPatch[] = [];
  private head = 0;
  private last = 0;

  /**
   * @param epoch names this log's numbering; a server restart starts a new
   *   epoch, so sequence numbers from an old one never match by accident.
   * @param capacity how many patches a reconnecting client can catch up on.
   */
  constructor(
    readonly epoch: string,
    readonly capacity: number,
  ) {
    if (!Number.isInteger(capacity) || capacity < 1) {
      throw new RangeError(`PatchLog: capacity must be an integer >= 1, got ${capacity}`);
    }
  }

  /** Sequence number of the last patch; 0 before any. */
  get seq(): number {
    return this.last;
  }

  /** Stamps the next sequence number, stores the frame `render` builds with it. */
  append(render: (seq: number) => string): LoggedPatch {
    this.last += 1;
    const patch = { seq: this.last, frame: render(this.last) };
    if (this.ring.length < this.capacity) this.ring.push(patch);
    else {
      this.ring[this.head] = patch;
      this.head = (this.head + 1) % this.capacity;
    }
    return patch;
  }

  /** Replays everything after `from.seq` when the ring still holds all of it. */
  resume(from: { epoch: string; seq: number }): ResumeDecision {
    if (from.epoch !== this.epoch || from.seq > this.last) return { kind: 'snapshot' };
    const missing = this.last - from.seq;
    if (missing > this.ring.length) return { kind: 'snapshot' };
    const ordered = [...this.ring.slice(this.head), ...this.ring.slice(0, this.head)];
    return { kind: 'replay', patches: ordered.slice(ordered.length - missing) };
  }
}
