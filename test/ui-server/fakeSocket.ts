/**
 * A stand-in for a `ws` WebSocket, for hub tests that need to set what a
 * real socket only reaches under load (bytes queued) and to see every frame
 * and close without a network.
 */
import { EventEmitter } from 'node:events';
import type { WebSocket } from 'ws';

export class FakeSocket extends EventEmitter {
  readonly OPEN = 1;
  readyState = 1;
  /** Bytes "queued": tests set it; each send adds the frame's length while `stalled`. */
  bufferedAmount = 0;
  stalled = false;
  readonly sent: string[] = [];
  closedWith: number | null = null;
  terminated = false;

  send(data: string | Buffer): void {
    this.sent.push(String(data));
    if (this.stalled) this.bufferedAmount += Buffer.byteLength(data);
  }
  ping(): void {}
  close(code: number): void {
    this.closedWith ??= code;
    this.readyState = 2;
  }
  terminate(): void {
    this.terminated = true;
    this.readyState = 3;
    this.emit('close', 1006, Buffer.alloc(0));
  }
  /** Frames of `type` received so far. */
  frames(type: string): Array<Record<string, unknown>> {
    return this.sent
      .map((s) => JSON.parse(s) as Record<string, unknown>)
      .filter((f) => f.type === type);
  }
  /** A client frame, as ws would deliver it. */
  receive(frame: object): void {
    this.emit('message', Buffer.from(JSON.stringify(frame)), false);
  }
  get ws(): WebSocket {
    return this as unknown as WebSocket;
  }
}
