/** Manual timers, a scriptable WebSocket and a sample card for the client's tests. */
import type { ClientTimers, WebSocketLike } from '../../src/client/boardClient.js';

export { queuedCard } from '../support/sampleCard.js';

export class ManualTimers implements ClientTimers {
  private pending = new Map<number, { fn: () => void; ms: number }>();
  private ids = 0;
  /** Every delay ever requested, in order. */
  readonly requested: number[] = [];
  setTimeout(fn: () => void, ms: number): unknown {
    const id = ++this.ids;
    this.pending.set(id, { fn, ms });
    this.requested.push(ms);
    return id;
  }
  clearTimeout(handle: unknown): void {
    this.pending.delete(handle as number);
  }
  /** Runs the pending timer with the shortest delay (ties: oldest first). */
  fireShortest(): number {
    const entries = [...this.pending.entries()].sort((a, b) => a[1].ms - b[1].ms || a[0] - b[0]);
    const first = entries[0];
    if (!first) throw new Error('no pending timer');
    this.pending.delete(first[0]);
    first[1].fn();
    return first[1].ms;
  }
  get size(): number {
    return this.pending.size;
  }
}

/** A socket the test drives: `deliver` plays a server frame, `sent` records what the client sent. */
export class ScriptedSocket implements WebSocketLike {
  static last: ScriptedSocket | null = null;
  readyState = 1;
  readonly sent: unknown[] = [];
  closedWith: number | null = null;
  onopen: ((ev: unknown) => void) | null = null;
  onmessage: ((ev: { data: unknown }) => void) | null = null;
  onclose: ((ev: { code: number; reason: string }) => void) | null = null;
  onerror: ((ev: unknown) => void) | null = null;
  constructor(
    readonly url: string,
    readonly protocols: string[],
  ) {
    ScriptedSocket.last = this;
  }
  send(data: string): void {
    this.sent.push(JSON.parse(data));
  }
  close(code = 1000): void {
    this.closedWith = code;
    this.readyState = 3;
    this.onclose?.({ code, reason: '' });
  }
  deliver(frame: unknown): void {
    this.onmessage?.({ data: typeof frame === 'string' ? frame : JSON.stringify(frame) });
  }
}

/** Resolves when `pred()` holds, checking on every store change; rejects after the deadline. */
export function until(
  subscribe: (fn: () => void) => { unsubscribe(): void },
  pred: () => boolean,
  what: string,
  deadlineMs = 3000,
): Promise<void> {
  return new Promise((resolve, reject) => {
    if (pred()) return resolve();
    const timer = setTimeout(() => {
      sub.unsubscribe();
      reject(new Error(`timed out waiting for ${what}`));
    }, deadlineMs);
    const sub = subscribe(() => {
      if (pred()) {
        clearTimeout(timer);
        sub.unsubscribe();
        resolve();
      }
    });
  });
}
