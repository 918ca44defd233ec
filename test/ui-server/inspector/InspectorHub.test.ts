/**
 * The hub against fake sockets whose unsent bytes we control: a slow viewer
 * is skipped (nothing is queued for it), catches up with the latest state in
 * one go, and is dropped if it stays stuck. Other viewers are unaffected.
 */
import { EventEmitter } from 'node:events';
import { fc, test } from '@fast-check/vitest';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import type { WebSocket } from 'ws';
import type { Supervisor } from '../../../src/supervisor/Supervisor.js';
import { InspectorHub } from '../../../src/ui-server/inspector/InspectorHub.js';
import type { InspectServerFrame } from '../../../src/ui-server/inspector/inspectorProtocol.js';
import { startWorkload, type Workload } from './fixtures.js';

class FakeSocket extends EventEmitter {
  readonly OPEN = 1;
  readyState = 1;
  bufferedAmount = 0;
  sent: InspectServerFrame[] = [];
  terminated = false;
  send(data: string): void {
    this.sent.push(JSON.parse(data) as InspectServerFrame);
  }
  close(): void {
    this.readyState = 3;
    this.emit('close');
  }
  terminate(): void {
    this.terminated = true;
    this.close();
  }
  types(): string[] {
    return this.sent.splice(0).map((f) => f.type);
  }
}

const asWs = (s: FakeSocket) => s as unknown as WebSocket;
const settle = async (rounds = 10) => {
  for (let i = 0; i < rounds; i++) await Promise.resolve();
};

let root: Supervisor | undefined;
afterEach(async () => {
  await root?.shutdown();
  root = undefined;
});

/** The hub as these tests run it: 100 ms flushes, a 1000-byte socket limit. */
function hubOn(w: Workload, o: { treeIntervalMs?: number; maxSkips?: number } = {}) {
  return new InspectorHub(w.inspector.collector, {
    clock: w.clock,
    flushMs: 100,
    treeIntervalMs: o.treeIntervalMs ?? 0,
    maxBufferedBytes: 1000,
    maxSkips: o.maxSkips ?? 100,
    json: {},
    logger: pino({ level: 'silent' }),
  });
}

async function setup(maxSkips = 3) {
  const w = await startWorkload();
  root = w.root;
  const hub = hubOn(w, { maxSkips });
  const crash = async (id: string) => {
    (w.root.child(id) as { send(e: unknown): void }).send({ type: 'CRASH' });
    await settle();
  };
  return { w, hub, crash };
}

describe('InspectorHub with a slow viewer', () => {
  it('skips a viewer with a full socket, then catches it up with the latest state at once', async () => {
    const { w, hub, crash } = await setup(100);
    const slow = new FakeSocket();
    const fast = new FakeSocket();
    hub.attach(asWs(slow));
    hub.attach(asWs(fast));
    expect(slow.types()).toEqual(['hello', 'tree', 'timeline']);
    fast.types();

    slow.bufferedAmount = 5000;
    for (let i = 0; i < 4; i++) {
      await crash('job-1');
      w.clock.increment(100);
    }
    expect(slow.sent).toEqual([]);
    // The fast viewer got each flush.
    expect(fast.types().filter((t) => t === 'tree')).toHaveLength(4);

    slow.bufferedAmount = 0;
    w.clock.increment(100);
    const caughtUp = slow.sent.splice(0);
    expect(caughtUp.map((f) => f.type)).toEqual(['tree', 'timeline']);
    const tree = caughtUp[0] as Extract<InspectServerFrame, { type: 'tree' }>;
    expect(tree.tree.supervisors[w.root.sessionId]!.children[0]!.restartCount).toBe(4);
    const line = caughtUp[1] as Extract<InspectServerFrame, { type: 'timeline' }>;
    expect(line.entries.filter((e) => e.kind === 'exit')).toHaveLength(4);
  });

  it('resets the timeline when the viewer fell further behind than the buffer holds', async () => {
    const w = await startWorkload({ timelineSize: 4 });
    root = w.root;
    const hub = hubOn(w);
    const s = new FakeSocket();
    hub.attach(asWs(s));
    s.types();
    s.bufferedAmount = 5000;
    for (let i = 0; i < 3; i++) {
      (w.root.child('job-2') as { send(e: unknown): void }).send({ type: 'CRASH' });
      await settle();
    }
    s.bufferedAmount = 0;
    w.clock.increment(100);
    const line = s.sent.find((f) => f.type === 'timeline') as Extract<
      InspectServerFrame,
      { type: 'timeline' }
    >;
    expect(line.reset).toBe(true);
    expect(line.entries).toHaveLength(4);
  });

  it('drops a viewer that stays stuck for more than maxSkips flushes', async () => {
    const { w, hub, crash } = await setup(2);
    const stuck = new FakeSocket();
    hub.attach(asWs(stuck));
    stuck.types();
    stuck.bufferedAmount = 5000;
    for (let i = 0; i < 3; i++) {
      await crash('job-1');
      w.clock.increment(100);
    }
    expect(stuck.terminated).toBe(true);
    expect(hub.viewerCount).toBe(0);
    expect(w.inspector.collector.changed).toBeNull();
  });

  it('sends tree frames at most every treeIntervalMs, the rest every flush', async () => {
    const w = await startWorkload();
    root = w.root;
    const hub = hubOn(w, { treeIntervalMs: 500 });
    const s = new FakeSocket();
    hub.attach(asWs(s));
    s.types();
    (w.root.child('job-1') as { send(e: unknown): void }).send({ type: 'CRASH' });
    await settle();
    w.clock.increment(100);
    expect(s.types()).toEqual(['timeline']);
    w.clock.increment(300);
    expect(s.types()).toEqual([]);
    w.clock.increment(100);
    expect(s.types()).toEqual(['tree']);
  });

  it('schedules nothing while nobody watches', async () => {
    const { w, hub, crash } = await setup();
    await crash('job-1');
    expect(w.inspector.collector.changed).toBeNull();
    const s = new FakeSocket();
    hub.attach(asWs(s));
    expect(w.inspector.collector.changed).not.toBeNull();
    s.close();
    expect(w.inspector.collector.changed).toBeNull();
  });
});

describe('InspectorHub closing', () => {
  test.prop([fc.integer({ min: 1, max: 4 }), fc.integer({ min: 0, max: 99 })], { numRuns: 15 })(
    'sends each viewer the changes of the last flush interval before it closes',
    async (crashes, elapsed) => {
      const w = await startWorkload();
      root = w.root;
      const hub = hubOn(w, { treeIntervalMs: 500 });
      const s = new FakeSocket();
      hub.attach(asWs(s));
      s.types();
      // What a supervisor reaching its intensity does just before the tree
      // (the UI server with it) is stopped: exits, not yet flushed.
      for (let i = 0; i < crashes; i++) {
        (w.root.child('job-1') as { send(e: unknown): void }).send({ type: 'CRASH' });
        await settle();
      }
      w.clock.increment(elapsed);
      hub.close();
      expect(s.readyState).toBe(3);
      const tree = s.sent.find((f) => f.type === 'tree') as
        | Extract<InspectServerFrame, { type: 'tree' }>
        | undefined;
      const job = tree?.tree.supervisors[w.root.sessionId]?.children.find((c) => c.id === 'job-1');
      expect(job?.restartCount).toBe(crashes);
      const exits = s.sent
        .filter(
          (f): f is Extract<InspectServerFrame, { type: 'timeline' }> => f.type === 'timeline',
        )
        .flatMap((f) => f.entries)
        .filter((e) => e.kind === 'exit');
      expect(exits).toHaveLength(crashes);
      await root.shutdown();
      root = undefined;
    },
  );
});

describe('InspectorHub timeline across connections', () => {
  /** What the page does with timeline frames (page/inspector.ts, onTimeline). */
  const keep = (shown: unknown[], f: Extract<InspectServerFrame, { type: 'timeline' }>) =>
    f.reset ? [...f.entries] : [...shown, ...f.entries];

  // At most 8 crashes in all: the workload's root gives up past 10 restarts
  // in its period, and its job would be gone (12 crashes failed in CI).
  test.prop([fc.array(fc.integer({ min: 0, max: 2 }), { minLength: 1, maxLength: 4 })], {
    numRuns: 15,
  })(
    'a page that reconnects any number of times shows each kept entry once',
    async (crashesBetween) => {
      const w = await startWorkload();
      root = w.root;
      const hub = hubOn(w);
      let shown: unknown[] = [];
      // One page: each round is a connection that sees some crashes, then drops.
      for (const crashes of crashesBetween) {
        const s = new FakeSocket();
        hub.attach(asWs(s));
        for (let i = 0; i < crashes; i++) {
          (w.root.child('job-1') as { send(e: unknown): void }).send({ type: 'CRASH' });
          await settle();
        }
        w.clock.increment(100);
        for (const f of s.sent) if (f.type === 'timeline') shown = keep(shown, f);
        s.close();
      }
      // Within the ring's capacity: the page shows exactly what the server keeps.
      expect(w.inspector.collector.timeline.seq).toBeLessThan(w.inspector.options.timelineSize);
      expect(shown).toEqual(w.inspector.collector.timeline.toArray());
      await root.shutdown();
      root = undefined;
    },
  );
});
