/**
 * The Stately bridge (src/actors/statelyInspect.ts) against a local ws
 * server standing in for Stately's relay. Lives with the inspector's tests.
 * Reconnect delays run on a simulated clock; only socket I/O is awaited,
 * each wait with a deadline.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type WebSocket as ServerSocket, WebSocketServer } from 'ws';
import { createActor } from 'xstate';
import * as mod from '../../../src/actors/statelyInspect.js';
import { runDocExamples } from '../../support/docExamples.js';
import { job, testClock } from './fixtures.js';

runDocExamples(new URL('../../../src/actors/statelyInspect.ts', import.meta.url), mod);

const DEADLINE_MS = 3000;

async function until(what: string, ok: () => boolean): Promise<void> {
  const deadline = Date.now() + DEADLINE_MS;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setImmediate(r));
  }
}

/** A relay that records every frame of every connection. */
class Relay {
  readonly connections: Array<{ socket: ServerSocket; frames: Array<Record<string, unknown>> }> =
    [];
  private constructor(readonly wss: WebSocketServer) {
    wss.on('connection', (socket) => {
      const c = { socket, frames: [] as Array<Record<string, unknown>> };
      this.connections.push(c);
      socket.on('message', (d) => c.frames.push(JSON.parse(String(d)) as Record<string, unknown>));
    });
  }
  static async start(port = 0): Promise<Relay> {
    const wss = new WebSocketServer({ port, host: '127.0.0.1' });
    await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
    return new Relay(wss);
  }
  get port(): number {
    return (this.wss.address() as AddressInfo).port;
  }
  close(): Promise<void> {
    for (const c of this.connections) c.socket.terminate();
    return new Promise((resolve) => this.wss.close(() => resolve()));
  }
}

async function freePort(): Promise<number> {
  const r = await Relay.start();
  const port = r.port;
  await r.close();
  return port;
}

const cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

function bridge(port: number, extra: Partial<mod.StatelyBridgeOptions> = {}) {
  const clock = testClock();
  const errors: unknown[] = [];
  const b = mod.createStatelyBridge({
    url: `ws://127.0.0.1:${port}`,
    clock,
    backoff: { minMs: 100, maxMs: 1000 },
    random: () => 0,
    onError: (e) => errors.push(e),
    ...extra,
  });
  cleanup.push(() => b.stop());
  return { b, clock, errors };
}

describe('Stately bridge', () => {
  it('speaks the documented wire format: actor, event and snapshot frames', async () => {
    const relay = await Relay.start();
    cleanup.push(() => relay.close());
    const { b } = bridge(relay.port);
    await until('open', () => b.stats().state === 'open');
    const actor = createActor(job, { inspect: b.observer }).start();
    cleanup.push(() => void actor.stop());
    actor.send({ type: 'START' });
    const frames = () => relay.connections[0]!.frames;
    await until('START', () =>
      frames().some((f) => (f.event as { type?: string })?.type === 'START'),
    );
    const reg = frames().find(
      (f) => f.type === '@xstate.actor' && f.sessionId === actor.sessionId,
    )!;
    expect(reg).toMatchObject({
      name: 'job',
      rootId: actor.sessionId,
      _version: '0.7.2',
      id: null,
    });
    expect(typeof reg.createdAt).toBe('string');
    expect(JSON.parse(reg.definition as string).id).toBe('job');
    const ev = frames().find((f) => (f.event as { type?: string })?.type === 'START')!;
    expect(ev).toMatchObject({ type: '@xstate.event', sessionId: actor.sessionId });
    expect(frames().some((f) => f.type === '@xstate.snapshot')).toBe(true);
    // The invoked child names its parent.
    const child = frames().find(
      (f) => f.type === '@xstate.actor' && f.parentId === actor.sessionId,
    );
    expect(child?.name).toBe('ticker');
  });

  it('keeps a bounded queue while disconnected and sends it once, after re-registering live actors', async () => {
    const port = await freePort();
    const { b, clock } = bridge(port, { maxQueue: 5 });
    const actor = createActor(job, { inspect: b.observer }).start();
    cleanup.push(() => void actor.stop());
    await until('refused', () => b.stats().state === 'waiting');
    for (let i = 0; i < 10; i++) actor.send({ type: i % 2 ? 'FINISH' : 'START' });
    expect(b.stats().queued).toBe(5);
    expect(b.stats().dropped).toBeGreaterThan(10);

    const relay = await Relay.start(port);
    cleanup.push(() => relay.close());
    clock.increment(1000);
    await until('reconnected', () => b.stats().state === 'open');
    await until('frames', () => (relay.connections[0]?.frames.length ?? 0) >= 6);
    const got = relay.connections[0]!.frames;
    // The live actors registered as they are now (the job; its ticker stopped
    // on the last FINISH), then the 5 newest queued frames, and nothing more.
    expect(got.filter((f) => f.type === '@xstate.actor').map((f) => f.name)).toEqual(['job']);
    expect((got[0]!.snapshot as { value: string }).value).toBe('idle');
    expect(got.slice(1).map((f) => f.type)).toHaveLength(5);
    const jobInit = (f: Record<string, unknown>) =>
      f.sessionId === actor.sessionId && (f.event as { type?: string })?.type === 'xstate.init';
    expect(got.some(jobInit)).toBe(false);
  });

  it('never resends on reconnect: only live actors are registered again', async () => {
    const relay = await Relay.start();
    cleanup.push(() => relay.close());
    const { b, clock } = bridge(relay.port);
    await until('open', () => b.stats().state === 'open');
    const actor = createActor(job, { inspect: b.observer }).start();
    cleanup.push(() => void actor.stop());
    actor.send({ type: 'START' });
    actor.send({ type: 'FINISH' });
    await until('frames', () => relay.connections[0]!.frames.length > 5);
    relay.connections[0]!.socket.terminate();
    await until('waiting', () => b.stats().state === 'waiting');
    clock.increment(1000);
    await until(
      'second connection',
      () => b.stats().state === 'open' && relay.connections.length === 2,
    );
    actor.send({ type: 'START' });
    await until('new event', () =>
      relay.connections[1]!.frames.some((f) => (f.event as { type?: string })?.type === 'START'),
    );
    const again = relay.connections[1]!.frames.map(
      (f) => `${f.type}:${(f.event as { type?: string })?.type ?? f.name}`,
    );
    expect(again.filter((t) => t.startsWith('@xstate.actor'))).toEqual([
      '@xstate.actor:job',
      '@xstate.actor:ticker',
    ]);
    expect(again.filter((t) => t === '@xstate.event:FINISH')).toEqual([]);
  });

  it('backs off between attempts and stop() cancels the pending reconnect', async () => {
    const port = await freePort();
    const { b, clock, errors } = bridge(port);
    await until('refused', () => b.stats().state === 'waiting');
    expect(errors.length).toBe(1);
    clock.increment(99);
    expect(b.stats().state).toBe('waiting');
    clock.increment(1);
    await until('refused again', () => b.stats().state === 'waiting' && errors.length === 2);
    // The second delay is doubled: 200 ms.
    clock.increment(199);
    expect(b.stats().state).toBe('waiting');
    await b.stop();
    clock.increment(60_000);
    expect(b.stats().state).toBe('stopped');
    expect(errors.length).toBe(2);
  });

  it('rejects a URL that is not ws:// or wss://', () => {
    expect(() => mod.createStatelyBridge({ url: 'http://localhost:1' })).toThrow(
      mod.StatelyInspectConfigError,
    );
    expect(() => mod.createStatelyBridge({ url: 'not a url' })).toThrow(
      mod.StatelyInspectConfigError,
    );
  });

  it('never keeps Node alive: a process with a refused or an open bridge exits on its own', async () => {
    const relay = await Relay.start();
    cleanup.push(() => relay.close());
    const closed = await freePort();
    const dir = mkdtempSync(join(tmpdir(), 'stately-'));
    const script = join(dir, 'child.mts');
    const src = new URL('../../../src/actors/statelyInspect.ts', import.meta.url).href;
    writeFileSync(
      script,
      `import { statelyBridgeFromEnv } from ${JSON.stringify(src)};
       const b = statelyBridgeFromEnv(process.env, { onError: () => {} });
       const until = Date.now() + 2000;
       const wait = () => b.stats().state === 'connecting' && Date.now() < until ? setTimeout(wait, 5) : console.log(b.stats().state);
       wait();\n`,
    );
    const run = (url: string) =>
      new Promise<{ code: number | null; out: string }>((resolve, reject) => {
        const child = spawn(process.execPath, ['--import', 'tsx', script], {
          env: { ...process.env, [mod.STATELY_INSPECT_ENV]: url },
          cwd: process.cwd(),
        });
        let out = '';
        child.stdout.on('data', (d) => (out += String(d)));
        const timer = setTimeout(() => {
          child.kill('SIGKILL');
          reject(new Error(`child still alive after 15 s (${url}): ${out}`));
        }, 15_000);
        child.on('exit', (code) => {
          clearTimeout(timer);
          resolve({ code, out });
        });
      });
    const refused = await run(`ws://127.0.0.1:${closed}`);
    expect(refused).toEqual({ code: 0, out: 'waiting\n' });
    const open = await run(`ws://127.0.0.1:${relay.port}`);
    expect(open).toEqual({ code: 0, out: 'open\n' });
  });
});
