/**
 * Live output of a local run: the wrapper tees it into a file, and this
 * follows the file as it grows. The run's stdout is not a pipe to this
 * process on purpose: a pipe would break when the node stops, and `tee`
 * would die of SIGPIPE, taking the command's output with it.
 *
 * The same follower serves a run this node started (from byte 0) and an
 * adopted one (from where the node starts showing it, `startOfTail`).
 *
 * A directory watch (inotify, FSEvents) wakes it as soon as `tee` writes; a
 * poll on the backend's clock covers file systems that do not report.
 */
import { closeSync, type FSWatcher, fstatSync, openSync, readSync, watch } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import type { Clock } from '../Clock.js';

const CHUNK_BYTES = 64 * 1024;

/**
 * Most bytes one drain passes on before it gives the event loop back; the
 * rest follows on the next turn. A run that writes faster than the node
 * shows it (`yes | head -c 200M`) kept one drain reading to the end of a
 * file that kept growing: every other user's request waited 5 s and more.
 */
export const DRAIN_SLICE_BYTES = 1024 * 1024;

/**
 * How far the reader may fall behind the file before it skips to the file's
 * last `SKIP_TO_TAIL_BYTES`, with a marked line: the live view is read by
 * people, and the end of an output is what explains it; the whole output is
 * still in the file, which `readOutput` and the downloads read.
 */
export const SKIP_BEHIND_BYTES = 8 * 1024 * 1024;
export const SKIP_TO_TAIL_BYTES = 1024 * 1024;

export class OutputFollower {
  private fd: number | null = null;
  private watcher: FSWatcher | null = null;
  private timer: unknown = null;
  private closed = false;
  /** A drain's next slice, due on the next turn, while one is. */
  private more: unknown = null;
  /** Whether what was passed on so far ends a line (a skip's mark starts one). */
  private atLineStart = true;
  private readonly decoder = new StringDecoder('utf8');

  constructor(
    private readonly path: string,
    private readonly onChunk: (chunk: string) => void,
    private readonly clock: Clock,
    private readonly pollMs: number,
    /** Byte offset to start at (an adopted run's output shown so far). */
    private offset = 0,
  ) {}

  /** Watches `dir` (the file's directory, which exists before the file does). */
  start(dir: string): void {
    try {
      this.watcher = watch(dir, { persistent: false }, () => this.drain());
      this.watcher.on('error', () => this.watcher?.close());
    } catch {
      // No watch on this file system: the poll alone will do.
    }
    this.schedule();
  }

  private schedule(): void {
    if (this.closed) return;
    this.timer = this.clock.setTimeout(() => {
      this.drain();
      this.schedule();
    }, this.pollMs);
  }

  /**
   * Reads what was appended since the last read and passes it on: at most
   * `DRAIN_SLICE_BYTES` now, the rest in slices on the next turns of the
   * loop (a 0 ms timer on the backend's clock), so that a run writing
   * faster than this reads never holds the node's thread.
   */
  drain(): void {
    if (this.more !== null) return; // a slice is due already: it goes on from here
    if (!this.read(DRAIN_SLICE_BYTES) || this.closed) return;
    this.more = this.clock.setTimeout(() => {
      this.more = null;
      this.drain();
    }, 0);
  }

  /** Passes on up to `limit` bytes; whether the file may hold more. */
  private read(limit: number): boolean {
    if (this.closed) return false;
    if (this.fd === null) {
      try {
        this.fd = openSync(this.path, 'r');
      } catch {
        return false; // tee has not created it yet
      }
    }
    this.skipIfFarBehind(this.fd);
    const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
    for (let taken = 0; taken < limit; ) {
      const n = readSync(this.fd, buffer, 0, Math.min(CHUNK_BYTES, limit - taken), this.offset);
      if (n === 0) return false;
      this.offset += n;
      taken += n;
      this.pass(this.decoder.write(buffer.subarray(0, n)));
      if (this.closed) return false; // the chunk's listener stopped this follower
    }
    return true;
  }

  private pass(text: string): void {
    if (text === '') return;
    this.atLineStart = text.endsWith('\n');
    this.onChunk(text);
  }

  /** Moves on to the file's last whole lines, marked, when more than `SKIP_BEHIND_BYTES` wait unread. */
  private skipIfFarBehind(fd: number): void {
    const size = fstatSync(fd).size;
    if (size - this.offset <= SKIP_BEHIND_BYTES) return;
    const to = Math.max(this.offset, startOfTail(this.path, SKIP_TO_TAIL_BYTES, fd));
    // A character cut by the skip is dropped with the bytes before it.
    this.decoder.end();
    const mark = `[roundtable: live output skipped ${to - this.offset} bytes, written faster than they could be shown]\n`;
    this.offset = to;
    this.pass(this.atLineStart ? mark : `\n${mark}`);
  }

  /** A last read to the end of the file, then stops. */
  finish(): void {
    // A run that wrote faster than it was read: at most the skip's window is left.
    this.read(Number.POSITIVE_INFINITY);
    if (!this.closed) {
      const rest = this.decoder.end();
      if (rest !== '') this.onChunk(rest);
    }
    this.close();
  }

  /** Stops at once, reading nothing more. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.watcher?.close();
    if (this.timer !== null) this.clock.clearTimeout(this.timer);
    if (this.more !== null) this.clock.clearTimeout(this.more);
    if (this.fd !== null) closeSync(this.fd);
  }
}

/**
 * Where the last `bytes` of the file at `path` begin, moved on to the start
 * of the first whole line in them, so a follower started there shows no
 * line's tail (nor half of a character). 0 when the file is that short or
 * not there yet; the cut point itself when those bytes hold no line break.
 * Given `open`, an open descriptor of that file, reads through it (and
 * leaves it open).
 */
export function startOfTail(path: string, bytes: number, open?: number): number {
  let fd: number;
  try {
    fd = open ?? openSync(path, 'r');
  } catch {
    return 0;
  }
  try {
    const size = fstatSync(fd).size;
    if (size <= bytes) return 0;
    const cut = size - bytes;
    // One byte before the cut too: a line break there means the cut starts a line.
    const window = Buffer.allocUnsafe(bytes + 1);
    const n = readSync(fd, window, 0, bytes + 1, cut - 1);
    const lf = window.subarray(0, n).indexOf(0x0a);
    return lf === -1 ? cut : cut + lf;
  } finally {
    if (open === undefined) closeSync(fd);
  }
}
