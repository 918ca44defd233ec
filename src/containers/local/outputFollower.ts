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

export class OutputFollower {
  private fd: number | null = null;
  private watcher: FSWatcher | null = null;
  private timer: unknown = null;
  private closed = false;
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

  /** Reads whatever was appended since the last read and passes it on. */
  drain(): void {
    if (this.closed) return;
    if (this.fd === null) {
      try {
        this.fd = openSync(this.path, 'r');
      } catch {
        return; // tee has not created it yet
      }
    }
    const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
    for (;;) {
      const n = readSync(this.fd, buffer, 0, CHUNK_BYTES, this.offset);
      if (n === 0) return;
      this.offset += n;
      const text = this.decoder.write(buffer.subarray(0, n));
      if (text !== '') this.onChunk(text);
    }
  }

  /** A last read to the end of the file, then stops. */
  finish(): void {
    this.drain();
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
    if (this.fd !== null) closeSync(this.fd);
  }
}

/**
 * Where the last `bytes` of the file at `path` begin, moved on to the start
 * of the first whole line in them, so a follower started there shows no
 * line's tail (nor half of a character). 0 when the file is that short or
 * not there yet; the cut point itself when those bytes hold no line break.
 */
export function startOfTail(path: string, bytes: number): number {
  let fd: number;
  try {
    fd = openSync(path, 'r');
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
    closeSync(fd);
  }
}
