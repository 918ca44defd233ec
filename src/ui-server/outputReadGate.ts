/**
 * How many output reads (a page or a download of a stored run output) one
 * user may have in flight on this server. Each read holds the store for a
 * while, on PGlite the node's own thread: without a bound, one user's
 * burst of 40 pages held /healthz for 21 s. Beyond the bound a read is
 * refused at once (429), never queued: a queue would hold the sockets and
 * the memory instead.
 */

/** A refused read: this user already has `limit` output reads in flight. */
export class OutputReadLimitError extends Error {
  override readonly name = 'OutputReadLimitError';
  readonly code = 'too_many_output_reads';
  readonly status = 429;
  constructor(readonly limit: number) {
    super(`at most ${limit} output reads at once per user: wait for one to finish`);
  }
}

/**
 * Counts each user's reads in flight (the admin counts as one user).
 *
 * @example
 * ```ts
 * const gate = new OutputReadGate(1)
 * const release = gate.enter('alice')
 * gate.inFlight('alice') // => 1
 * gate.enter('alice') // throws OutputReadLimitError
 * release(); release()
 * gate.inFlight('alice') // => 0
 * ```
 */
export class OutputReadGate {
  private readonly reads = new Map<string, number>();

  constructor(readonly limit: number) {}

  /** Takes a place for `who`, or throws; the answer gives it back (once, however often called). */
  enter(who: string): () => void {
    const held = this.reads.get(who) ?? 0;
    if (held >= this.limit) throw new OutputReadLimitError(this.limit);
    this.reads.set(who, held + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.reads.get(who) ?? 1) - 1;
      if (left <= 0) this.reads.delete(who);
      else this.reads.set(who, left);
    };
  }

  /** Reads `who` has in flight. */
  inFlight(who: string): number {
    return this.reads.get(who) ?? 0;
  }
}
