/** A raw client of the inspector topic: frames are queued and taken with a deadline. */
import { WebSocket } from 'ws';
import {
  BEARER_SUBPROTOCOL_PREFIX,
  INSPECT_SUBPROTOCOL,
  INSPECT_WS_PATH,
  type InspectServerFrame,
} from '../../../src/ui-server/inspector/inspectorProtocol.js';

const DEADLINE_MS = 3000;

export type Of<T extends InspectServerFrame['type']> = Extract<InspectServerFrame, { type: T }>;

export class InspectClient {
  readonly frames: InspectServerFrame[] = [];
  private waiters: Array<() => void> = [];
  readonly closed: Promise<{ code: number; reason: string }>;

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      this.frames.push(JSON.parse(String(data)) as InspectServerFrame);
      for (const w of this.waiters.splice(0)) w();
    });
    this.closed = new Promise((resolve) => {
      ws.on('close', (code, reason) => resolve({ code, reason: String(reason) }));
    });
  }

  static url(httpUrl: string): string {
    return `${httpUrl.replace(/^http/, 'ws')}${INSPECT_WS_PATH}`;
  }

  /** Opens with the token in the bearer subprotocol (as the page does). */
  static async open(httpUrl: string, token: string): Promise<InspectClient> {
    const ws = new WebSocket(InspectClient.url(httpUrl), [
      INSPECT_SUBPROTOCOL,
      BEARER_SUBPROTOCOL_PREFIX + token,
    ]);
    const client = new InspectClient(ws);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    return client;
  }

  /** The HTTP status an upgrade is refused with. */
  static async refusal(httpUrl: string, headers: Record<string, string>): Promise<number> {
    const ws = new WebSocket(InspectClient.url(httpUrl), [INSPECT_SUBPROTOCOL], { headers });
    return new Promise<number>((resolve, reject) => {
      ws.once('unexpected-response', (_req, res) => {
        resolve(res.statusCode ?? 0);
        ws.terminate();
      });
      ws.once('open', () => reject(new Error('upgrade was accepted')));
      ws.once('error', () => {});
    });
  }

  /**
   * The first queued (or coming) frame of `type` that satisfies `pred`; frames
   * queued before it are dropped. Fails after the deadline.
   */
  async take<T extends InspectServerFrame['type']>(
    type: T,
    pred: (f: Of<T>) => boolean = () => true,
  ): Promise<Of<T>> {
    const deadline = Date.now() + DEADLINE_MS;
    for (;;) {
      const at = this.frames.findIndex((f) => f.type === type && pred(f as Of<T>));
      if (at >= 0) {
        const [f] = this.frames.splice(0, at + 1).slice(-1);
        return f as Of<T>;
      }
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new Error(
          `no ${type} frame within ${DEADLINE_MS} ms; had ${JSON.stringify(this.frames.map((f) => f.type))}`,
        );
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  send(frame: unknown): void {
    this.ws.send(typeof frame === 'string' ? frame : JSON.stringify(frame));
  }

  close(): void {
    this.ws.close();
  }
}
