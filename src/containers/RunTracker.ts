/**
 * What the owner that started a run holds in memory: its live output and the
 * exit once known. Output that arrives before anyone attaches is kept (up to
 * a limit) and replayed, so `attach` right after `start` misses nothing.
 *
 * Lost on restart by design: an adopting owner uses `observe` and
 * `readOutput`, which read the files the wrapper leaves in the container.
 */

import type { Clock } from './Clock.js';
import type { AttachOptions, RunExit } from './ContainerBackend.js';
import { ContainerError } from './ContainerError.js';
import { withDeadline } from './deadline.js';
import { OUTPUT_LIMIT_BYTES } from './wrapper.js';

type Outcome = { ok: true; exit: RunExit } | { ok: false; error: ContainerError };

export class RunTracker {
  private replay: string[] = [];
  private replayBytes = 0;
  private droppedBytes = 0;
  private readonly listeners = new Set<(chunk: string) => void>();
  private outcome: Outcome | null = null;
  private readonly waiters = new Set<(outcome: Outcome) => void>();

  constructor(
    readonly label: string,
    private readonly replayLimitBytes: number = OUTPUT_LIMIT_BYTES,
  ) {}

  get finished(): boolean {
    return this.outcome !== null;
  }

  push(chunk: string): void {
    if (chunk === '' || this.outcome) return;
    this.replay.push(chunk);
    this.replayBytes += Buffer.byteLength(chunk);
    // Keep the newest output: the end of a run is what explains its exit.
    while (this.replayBytes > this.replayLimitBytes && this.replay.length > 1) {
      const dropped = this.replay.shift() ?? '';
      const size = Buffer.byteLength(dropped);
      this.replayBytes -= size;
      this.droppedBytes += size;
    }
    for (const listener of this.listeners) listener(chunk);
  }

  exit(exit: RunExit): void {
    this.settle({ ok: true, exit });
  }

  fail(error: ContainerError): void {
    this.settle({ ok: false, error });
  }

  private settle(outcome: Outcome): void {
    if (this.outcome) return;
    this.outcome = outcome;
    for (const waiter of this.waiters) waiter(outcome);
    this.waiters.clear();
  }

  /** Replays what was kept, streams the rest, resolves with the exit. */
  attach(options: AttachOptions, clock: Clock, defaultTimeoutMs: number): Promise<RunExit> {
    const { onOutput, signal, timeoutMs = defaultTimeoutMs } = options;
    if (onOutput) {
      if (this.droppedBytes > 0) {
        onOutput(`[roundtable: live output cut, first ${this.droppedBytes} bytes dropped]\n`);
      }
      for (const chunk of this.replay) onOutput(chunk);
      this.listeners.add(onOutput);
    }
    const detach = () => {
      if (onOutput) this.listeners.delete(onOutput);
    };
    let waiter: ((outcome: Outcome) => void) | undefined;
    const done = new Promise<RunExit>((resolve, reject) => {
      waiter = (outcome) => {
        detach();
        if (outcome.ok) resolve(outcome.exit);
        else reject(outcome.error);
      };
      if (this.outcome) waiter(this.outcome);
      else this.waiters.add(waiter);
    });
    return withDeadline(done, {
      clock,
      ms: timeoutMs,
      what: `attach ${this.label}`,
      ...(signal ? { signal } : {}),
      onAbandon: () => {
        detach();
        if (waiter) this.waiters.delete(waiter);
      },
    });
  }
}

/** Rejection for attach on a run this backend instance did not start. */
export function notAttached(handle: string): ContainerError {
  return new ContainerError(
    'not_attached',
    `${handle} was not started by this backend instance; use observe and readOutput`,
  );
}
