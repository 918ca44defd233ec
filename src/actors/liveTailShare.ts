/**
 * A running card's output on every node's board (src/db/liveTails.ts): the
 * node that runs a session writes the lines its card shows (`LiveTailWriter`),
 * and every node whose board is watched reads the tails of the running
 * cards it shows for runs held elsewhere (`LiveTailReader`).
 *
 * Why a poll and no NOTIFY: every listening backend of the database is
 * woken by every notification, whatever its channel
 * (src/actors/runtimeWatch.ts), and a second channel would cost each node a second
 * listening session on the server; a tail a second old is what a card of
 * a run on another machine can promise anyway. Why written only when it
 * changed, and at most every `everyMs`: a chatty run prints thousands of
 * lines a second, and each node's tails ride one statement. A run that ends
 * before its first period writes nothing: its finished row brings the
 * stored output to every board, as before. Why only while another board is
 * watched (the statement reads the flags): nobody reads them otherwise; a
 * tail not written then is kept and sent with the next write.
 */
import type { KnownTail, LiveTail, LiveTailsWrite, LiveTailsWritten } from '../db/index.js';
import { LIVE_TAILS_PER_STATEMENT } from '../db/index.js';
import { EMPTY_OUTPUT, type OutputTail, pushOutput } from '../machines/outputTail.js';
import type { SupervisorClock } from '../supervisor/clock.js';
import { afterStoreFailure } from './afterStoreFailure.js';
import { CARD_OUTPUT, CARD_OUTPUT_LINES, cutLine } from './runtimeBoardCard.js';

/**
 * The lines a card shows of a tail: its complete lines and its unfinished
 * one, the last 20.
 *
 * @example
 * ```ts
 * cardLines({ lines: ['a', 'b'], partial: 'c' }) // => ['a', 'b', 'c']
 * cardLines({ lines: ['a'], partial: '' }) // => ['a']
 * cardLines({ lines: Array.from({ length: 20 }, (_, i) => `${i}`), partial: 'x' }).slice(-2) // => ['19', 'x']
 * cardLines({ lines: Array.from({ length: 20 }, (_, i) => `${i}`), partial: 'x' }).length // => 20
 * ```
 */
export function cardLines(tail: OutputTail): string[] {
  const lines = tail.partial === '' ? [...tail.lines] : [...tail.lines, cutLine(tail.partial)];
  return lines.slice(-CARD_OUTPUT_LINES);
}

/** What the shares run on; `track` keeps a write or read in the runtime's in-flight set. */
interface ShareOptions {
  clock: SupervisorClock;
  /** Most often a node writes its tails, and reads the others'. */
  everyMs: number;
  onError(error: unknown): void;
  track<T>(work: Promise<T>): Promise<T>;
}

export interface LiveTailWriterOptions extends ShareOptions {
  owner: string;
  /** The epoch this node holds `sessionId` at; undefined once the run left it. */
  heldEpoch(sessionId: string): number | undefined;
  /** Writes tails (while another board is watched) and deletes ended ones' rows. */
  write(input: LiveTailsWrite): Promise<LiveTailsWritten>;
}

/** The node's side that runs: its sessions' tails, written when they changed. */
export class LiveTailWriter {
  /** Sessions this node runs that printed something, with their tails. */
  private readonly tails = new Map<string, OutputTail>();
  /** Of those, the ones whose tail changed since it was last written. */
  private readonly dirty = new Set<string>();
  /** Rows this boot wrote and has not deleted. */
  private readonly written = new Set<string>();
  private timer: unknown = null;
  private writing = false;
  private failing = false;
  private stopped = false;

  constructor(private readonly o: LiveTailWriterOptions) {}

  /** A chunk of `sessionId`'s output, as its runner streamed it here. */
  output(sessionId: string, chunk: string): void {
    if (this.stopped) return;
    this.tails.set(
      sessionId,
      pushOutput(this.tails.get(sessionId) ?? EMPTY_OUTPUT, chunk, CARD_OUTPUT),
    );
    this.dirty.add(sessionId);
    this.arm();
  }

  /** Sessions whose tails are kept now (for tests and /metrics). */
  size(): number {
    return this.tails.size;
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== null) this.o.clock.clearTimeout(this.timer);
    this.timer = null;
  }

  private arm(): void {
    if (this.timer !== null || this.writing || this.stopped) return;
    if (this.tails.size === 0 && this.written.size === 0) return;
    this.timer = this.o.clock.setTimeout(() => {
      this.timer = null;
      this.flush();
    }, this.o.everyMs);
  }

  private flush(): void {
    if (this.stopped) return;
    const tails: LiveTailsWrite['tails'] = [];
    for (const [sessionId, tail] of this.tails) {
      const epoch = this.o.heldEpoch(sessionId);
      if (epoch === undefined) {
        this.tails.delete(sessionId);
        this.dirty.delete(sessionId);
      } else if (this.dirty.delete(sessionId)) {
        tails.push({ sessionId, epoch, lines: cardLines(tail) });
      }
    }
    // A row whose run left this node (ended, fenced out) goes with it.
    const ended = [...this.written].filter((id) => !this.tails.has(id));
    for (const id of ended) this.written.delete(id);
    if (tails.length === 0 && ended.length === 0) {
      this.arm();
      return;
    }
    this.writing = true;
    void this.o
      .track(this.send(tails, ended))
      .then(
        () => {
          this.failing = false;
        },
        (error: unknown) => {
          // Tried again next period with what is held then; an outage is told once.
          for (const t of tails) if (this.tails.has(t.sessionId)) this.dirty.add(t.sessionId);
          for (const id of ended) this.written.add(id);
          if (!this.failing) this.o.onError(error);
          this.failing = true;
          // A closed store never answers again: no write after this one.
          if (afterStoreFailure(error) === 'halt') this.stop();
        },
      )
      .finally(() => {
        this.writing = false;
        this.arm();
      });
  }

  private async send(tails: LiveTailsWrite['tails'], ended: string[]): Promise<void> {
    const n = LIVE_TAILS_PER_STATEMENT;
    for (let i = 0; i < Math.max(tails.length, ended.length); i += n) {
      const sent = tails.slice(i, i + n);
      const r = await this.o.write({
        owner: this.o.owner,
        tails: sent,
        ended: ended.slice(i, i + n),
      });
      for (const id of r.written) this.written.add(id);
      // Nobody else watches: nothing was written; kept for the first write once someone does.
      if (!r.watched)
        for (const t of sent) if (this.tails.has(t.sessionId)) this.dirty.add(t.sessionId);
    }
  }
}

export interface LiveTailReaderOptions extends ShareOptions {
  /** The running cards this node's board shows whose runs are held elsewhere. */
  remote(): { sessionId: string; epoch: number }[];
  read(known: KnownTail[]): Promise<LiveTail[]>;
  /** A tail newer than the card shows. */
  show(tail: LiveTail): void;
}

/**
 * The node's side that watches: the tails of runs held elsewhere, every
 * period while its board is watched (no timer while nobody looks).
 */
export class LiveTailReader {
  /** Session id -> the epoch and seq of the tail its card shows. */
  private readonly seen = new Map<string, { epoch: number; seq: number }>();
  private timer: unknown = null;
  private reading = false;
  private watched = false;
  private failing = false;
  private stopped = false;

  constructor(private readonly o: LiveTailReaderOptions) {}

  /** Someone looks at the board (true) or nobody does any more (false). */
  setWatched(watched: boolean): void {
    this.watched = watched;
    if (watched) this.arm();
    else this.disarm();
  }

  stop(): void {
    this.stopped = true;
    this.disarm();
  }

  private disarm(): void {
    if (this.timer !== null) this.o.clock.clearTimeout(this.timer);
    this.timer = null;
  }

  private arm(): void {
    if (this.timer !== null || this.reading || this.stopped || !this.watched) return;
    this.timer = this.o.clock.setTimeout(() => {
      this.timer = null;
      this.reading = true;
      void this.o.track(this.read()).finally(() => {
        this.reading = false;
        this.arm();
      });
    }, this.o.everyMs);
  }

  private async read(): Promise<void> {
    if (this.stopped || !this.watched) return;
    const remote = this.o.remote();
    const known: KnownTail[] = [];
    const kept = new Set<string>();
    for (const r of remote) {
      const had = this.seen.get(r.sessionId);
      known.push({ ...r, seq: had !== undefined && had.epoch === r.epoch ? had.seq : 0 });
      kept.add(r.sessionId);
    }
    for (const id of this.seen.keys()) if (!kept.has(id)) this.seen.delete(id);
    try {
      for (let i = 0; i < known.length; i += LIVE_TAILS_PER_STATEMENT) {
        const tails = await this.o.read(known.slice(i, i + LIVE_TAILS_PER_STATEMENT));
        if (this.stopped) return;
        for (const t of tails) {
          this.seen.set(t.sessionId, { epoch: t.epoch, seq: t.seq });
          this.o.show(t);
        }
      }
      this.failing = false;
    } catch (error) {
      if (!this.failing) this.o.onError(error);
      this.failing = true;
      // A closed store never answers again: no read after this one.
      if (afterStoreFailure(error) === 'halt') this.stop();
    }
  }
}
