/**
 * Live output of a run whose file is only reachable through an engine's
 * API (Docker, Swarm, the simulated cluster): the file is read in slices
 * from where the last read ended, one request per period on the backend's
 * clock. The local backend reads its file directly (local/outputFollower.ts)
 * and keeps the same rules: start at a byte or at the first whole line of
 * the tail, skip with a marked line when far behind, read to the end on a
 * stop.
 *
 * The source says how a slice is read; this file says when, and what the
 * bytes become. Nothing here throws: an engine fault is retried on the next
 * period (each read has the source's deadline), and a stop's final reads
 * give up at the first fault, since the caller reads the whole output
 * (`readOutput`) after a stop anyway.
 */
import { StringDecoder } from 'node:string_decoder';
import type { Clock } from './Clock.js';
import type { FollowOptions } from './ContainerBackend.js';

/** One read of a run's output file. */
export type OutputSlice =
  /** The file is not there yet (the wrapper has not started `tee`). */
  | { kind: 'missing' }
  /**
   * The run's container is gone, or another one runs under the handle (a
   * reschedule: an empty `/tmp`). The file will never grow again: stop.
   */
  | { kind: 'replaced' }
  /** `bytes` of the file from byte `start`; `size` is the file's size when read. */
  | { kind: 'bytes'; start: number; size: number; bytes: Buffer };

export interface OutputSource {
  /**
   * At most `limit` bytes of the output file from byte `from`, or, for a
   * negative `from`, from its last `-from` bytes. Rejects on an engine
   * fault, within the source's own deadline.
   */
  read(from: number, limit: number): Promise<OutputSlice>;
}

/**
 * The slice of a whole file an `OutputSource.read(from, limit)` answers,
 * for a source that holds the file in memory.
 *
 * @example
 * ```ts
 * sliceOf(Buffer.from('abcdef'), 2, 3) // => { kind: 'bytes', start: 2, size: 6, bytes: Buffer.from('cde') }
 * sliceOf(Buffer.from('abcdef'), -2, 9).start // => 4
 * sliceOf(Buffer.from('ab'), -9, 9).start // => 0
 * ```
 */
export function sliceOf(file: Buffer, from: number, limit: number): OutputSlice {
  const start = from < 0 ? Math.max(0, file.length + from) : from;
  return { kind: 'bytes', start, size: file.length, bytes: file.subarray(start, start + limit) };
}

export interface PolledFollowerOptions {
  clock: Clock;
  /** Between two reads that found nothing more; a read that filled its slice goes on at once. */
  pollMs: number;
  /**
   * The longest wait while the file does not grow (or the engine fails):
   * each such read doubles the wait from `pollMs` up to this; a read that
   * finds new bytes goes back to `pollMs`. Left out: always `pollMs`.
   */
  quietPollMs?: number;
  /** Most bytes one read asks for. */
  sliceBytes: number;
  /** How far behind the file the reader may fall before it skips to the tail. */
  skipBehindBytes: number;
  /** Where a skip goes on: the first whole line of the file's last this many bytes. */
  skipToTailBytes: number;
}

/**
 * Slices and skips as the local follower's (local/outputFollower.ts): a
 * read of 1 MiB at most, and a reader more than 8 MiB behind goes on from
 * the first whole line of the last 1 MiB, for the reasons given there.
 */
export const FOLLOW_SLICES = {
  sliceBytes: 1024 * 1024,
  skipBehindBytes: 8 * 1024 * 1024,
  skipToTailBytes: 1024 * 1024,
} as const;

/** What a follow shows of the output so far when not told where to start (as the local backend). */
export const FOLLOW_TAIL_BYTES = 64 * 1024;

/**
 * Follows `source` as `options` say (the port's `FollowOptions`), capping the
 * starting tail at `limitBytes` (the output limit). Returns at once.
 */
export function followPolled(
  source: OutputSource,
  follow: FollowOptions,
  o: PolledFollowerOptions,
  limitBytes: number,
): void {
  if (follow.signal.aborted) {
    follow.onEnd?.();
    return;
  }
  const tail = Math.min(follow.tailBytes ?? FOLLOW_TAIL_BYTES, limitBytes);
  const follower = new PolledFollower(source, follow, o, tail);
  follow.signal.addEventListener('abort', () => follower.stop(), { once: true });
  follower.schedule(0);
}

class PolledFollower {
  private readonly decoder = new StringDecoder('utf8');
  private timer: unknown = null;
  private reading = false;
  private stopping = false;
  private closed = false;
  /** Whether what was passed on so far ends a line (a skip's mark starts one). */
  private atLineStart = true;
  /** Set while the next read goes to the tail: this many bytes before the end. */
  private fromTail: number | null;
  /** The next tail read is a skip (said in a line), not the start. */
  private skipping = false;
  private offset: number;
  /** The largest size the file was seen at; -1 until it was there. */
  private largest = -1;
  /** Reads in a row that found no new bytes (or failed): how long the next wait is. */
  private quiet = 0;

  constructor(
    private readonly source: OutputSource,
    private readonly follow: FollowOptions,
    private readonly o: PolledFollowerOptions,
    tailBytes: number,
  ) {
    this.offset = follow.fromByte ?? 0;
    this.fromTail = follow.fromByte === undefined ? tailBytes : null;
  }

  schedule(ms: number): void {
    if (this.closed) return;
    this.timer = this.o.clock.setTimeout(() => {
      this.timer = null;
      void this.read();
    }, ms);
  }

  /** The signal aborted: read to the end of the file, then close. */
  stop(): void {
    if (this.stopping || this.closed) return;
    this.stopping = true;
    if (this.timer !== null) this.o.clock.clearTimeout(this.timer);
    this.timer = null;
    // A read in flight goes on to the end when it lands.
    if (!this.reading) void this.read();
  }

  private async read(): Promise<void> {
    if (this.closed || this.reading) return;
    this.reading = true;
    // One byte before the tail's cut too: a line break there means the cut starts a line.
    const from = this.fromTail === null ? this.offset : -(this.fromTail + 1);
    const slice = await this.source.read(from, this.o.sliceBytes).catch(() => null);
    this.reading = false;
    try {
      this.after(slice);
    } catch {
      // `onOutput` threw. Nothing awaits this read to hand the error to, and
      // a rejection here would end the process: the follow ends instead.
      this.close();
    }
  }

  /** What a read's answer (null: a fault) means: pass it on, then read again, later or now, or stop. */
  private after(slice: OutputSlice | null): void {
    if (this.closed) return;
    // A file gone, or shorter than it was, is not coming back (a container
    // restarted in place has an empty /tmp, under the same id). Not shorter
    // than `fromByte`: the caller's count of bytes may run ahead of the file
    // (a stream's invalid UTF-8 counted as U+FFFD), and the file catches up.
    const lost =
      slice?.kind === 'replaced' ||
      (slice?.kind === 'missing' && this.largest >= 0) ||
      (slice?.kind === 'bytes' && slice.size < this.largest);
    // A stop's last read failed: the caller reads the whole output itself.
    if (lost || (slice === null && this.stopping)) {
      this.close();
      return;
    }
    if (slice?.kind === 'bytes') this.largest = Math.max(this.largest, slice.size);
    const before = this.offset;
    const more = slice?.kind === 'bytes' && this.take(slice);
    if (this.closed) return;
    this.quiet = this.offset > before ? 0 : this.quiet + 1;
    if (!this.stopping) this.schedule(more ? 0 : this.waitMs());
    else if (more) void this.read();
    else this.finish();
  }

  /**
   * The wait before the next read: `pollMs` after new bytes, doubled per
   * quiet read up to `quietPollMs`. Each read of a Docker run is an exec
   * in its container; a run that prints rarely (a build compiling, an agent
   * thinking) need not cost its engine one a second.
   */
  private waitMs(): number {
    const { pollMs, quietPollMs } = this.o;
    if (quietPollMs === undefined || this.quiet <= 1) return pollMs;
    // Capped exponent: the count can grow for as long as a run stays quiet.
    return Math.min(quietPollMs, pollMs * 2 ** Math.min(this.quiet - 1, 30));
  }

  /** Passes the slice on; whether the file may hold more than was read. */
  private take(slice: { start: number; size: number; bytes: Buffer }): boolean {
    let bytes = slice.bytes;
    let start = slice.start;
    if (this.fromTail !== null && start > 0) {
      // From the first whole line; with no line break, from just after the extra byte.
      const lf = bytes.indexOf(0x0a);
      const drop = lf === -1 ? 1 : lf + 1;
      bytes = bytes.subarray(drop);
      start += drop;
    }
    if (start < this.offset) {
      // Never shows a byte twice (a tail read racing a slow writer).
      bytes = bytes.subarray(Math.min(bytes.length, this.offset - start));
      start = this.offset;
    }
    if (this.skipping) this.markSkip(start - this.offset);
    this.fromTail = null;
    this.skipping = false;
    this.offset = start + bytes.length;
    this.pass(this.decoder.write(bytes));
    if (slice.size - this.offset > this.o.skipBehindBytes) {
      this.fromTail = this.o.skipToTailBytes;
      this.skipping = true;
      return true;
    }
    return slice.bytes.length >= this.o.sliceBytes;
  }

  private markSkip(skipped: number): void {
    // A character cut by the skip is dropped with the bytes before it.
    this.decoder.end();
    const mark = `[roundtable: live output skipped ${skipped} bytes, written faster than they could be shown]\n`;
    this.pass(this.atLineStart ? mark : `\n${mark}`);
  }

  private pass(text: string): void {
    if (text === '' || this.closed) return;
    this.atLineStart = text.endsWith('\n');
    this.follow.onOutput(text);
  }

  private finish(): void {
    this.pass(this.decoder.end());
    this.close();
  }

  private close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.timer !== null) this.o.clock.clearTimeout(this.timer);
    this.timer = null;
    this.follow.onEnd?.();
  }
}
