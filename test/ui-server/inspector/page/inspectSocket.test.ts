/**
 * The inspector page's connection in Node: a fake WebSocket and location
 * stand in for the browser's, fake timers for its clock. The page itself,
 * against a real server, is inspector.test.ts (chromium).
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { InspectServerFrame } from '../../../../src/ui-server/inspector/inspectorProtocol.js';
import {
  connectInspector,
  type InspectSocketHandlers,
} from '../../../../src/ui-server/inspector/page/inspectSocket.js';

class FakeSocket {
  static made: FakeSocket[] = [];
  onopen: (() => void) | null = null;
  onmessage: ((m: { data: unknown }) => void) | null = null;
  onclose: ((e: { code: number }) => void) | null = null;
  constructor(
    readonly url: string,
    readonly protocols: string[],
  ) {
    FakeSocket.made.push(this);
  }
}

function handlers() {
  const seen: string[] = [];
  const frames: InspectServerFrame[] = [];
  const on: InspectSocketHandlers = {
    created: () => seen.push('created'),
    open: () => seen.push('open'),
    frame: (f) => frames.push(f),
    closed: (code, retryInMs) => seen.push(`closed ${code} ${retryInMs}`),
  };
  return { on, seen, frames };
}

beforeEach(() => {
  FakeSocket.made = [];
  vi.useFakeTimers();
  vi.stubGlobal('WebSocket', FakeSocket);
  vi.stubGlobal('location', { protocol: 'https:', host: 'node.example:8443' });
});
afterEach(() => {
  vi.useRealTimers();
  vi.unstubAllGlobals();
});

const last = () => FakeSocket.made.at(-1)!;

describe('connectInspector', () => {
  it('connects to the topic with the token as a subprotocol, never in the URL', () => {
    connectInspector('adm-token', handlers().on);
    expect(last().url).toBe('wss://node.example:8443/inspect/ws');
    expect(last().protocols).toEqual(['roundtable.inspect.v1', 'roundtable.bearer.adm-token']);
  });

  it('hands every frame on parsed', () => {
    const h = handlers();
    connectInspector('t', h.on);
    last().onmessage?.({ data: '{"type":"gone","sessionId":"x:1"}' });
    expect(h.frames).toEqual([{ type: 'gone', sessionId: 'x:1' }]);
  });

  it('reconnects after 0.5 s, 1 s, 2 s…, up to 30 s, and starts over once a connection opens', () => {
    const h = handlers();
    connectInspector('t', h.on);
    for (let i = 0; i < 8; i++) {
      last().onclose?.({ code: 1006 });
      vi.runOnlyPendingTimers();
    }
    expect(FakeSocket.made).toHaveLength(9);
    expect(h.seen.filter((s) => s.startsWith('closed'))).toEqual(
      [500, 1000, 2000, 4000, 8000, 16000, 30000, 30000].map((ms) => `closed 1006 ${ms}`),
    );
    last().onopen?.();
    last().onclose?.({ code: 1001 });
    expect(h.seen.at(-1)).toBe('closed 1001 500');
    expect(h.seen.slice(0, 2)).toEqual(['created', 'closed 1006 500']);
  });

  it('does not connect again before the delay is over', () => {
    connectInspector('t', handlers().on);
    last().onclose?.({ code: 1006 });
    vi.advanceTimersByTime(499);
    expect(FakeSocket.made).toHaveLength(1);
    vi.advanceTimersByTime(1);
    expect(FakeSocket.made).toHaveLength(2);
  });
});
