import { afterEach, describe, expect, it } from 'vitest';
import { createActor, fromPromise } from 'xstate';
import type { Supervisor } from '../../../src/supervisor/Supervisor.js';
import { InspectionCollector } from '../../../src/ui-server/inspector/InspectionCollector.js';
import { rootSupervisors } from '../../../src/ui-server/inspector/inspectorTree.js';
import { job, startWorkload, testClock } from './fixtures.js';

const settle = async (rounds = 10) => {
  for (let i = 0; i < rounds; i++) await Promise.resolve();
};

let root: Supervisor | undefined;
afterEach(async () => {
  await root?.shutdown();
  root = undefined;
});

describe('InspectionCollector over a supervised tree', () => {
  it('builds the tree from the stream: supervisors, children, nesting', async () => {
    const w = await startWorkload();
    root = w.root;
    const c = w.inspector.collector;
    const roots = rootSupervisors(c.tree);
    expect(roots).toHaveLength(1);
    const top = c.tree.supervisors[roots[0]!]!;
    expect(top.id).toBe('root');
    expect(top.children.map((ch) => [ch.id, ch.status, ch.restartCount])).toEqual([
      ['job-1', 'running', 0],
      ['job-2', 'running', 0],
      ['nested', 'running', 0],
    ]);
    const nested = c.tree.supervisors[top.children[2]!.sessionId!]!;
    expect(nested.children.map((ch) => ch.id)).toEqual(['deep']);
    // The worker's record holds its machine and its live snapshot.
    const rec = c.actors.get(top.children[0]!.sessionId!)!;
    expect(rec.id).toBe('job-1');
    expect(rec.logic).toBe(job);
    expect((rec.snapshot as { value: string }).value).toBe('idle');
  });

  it('records a crash: exit reason, restart count, a new incarnation, the timeline', async () => {
    const w = await startWorkload();
    root = w.root;
    const c = w.inspector.collector;
    const before = c.tree.supervisors[w.root.sessionId]!.children[0]!.sessionId!;
    (w.root.child('job-1') as { send(e: unknown): void }).send({ type: 'CRASH' });
    await settle();
    const child = c.tree.supervisors[w.root.sessionId]!.children[0]!;
    expect(child.restartCount).toBe(1);
    expect(child.status).toBe('running');
    expect(child.sessionId).not.toBe(before);
    expect(child.exits).toEqual([{ at: w.clock.now(), reason: 'error: boom', clean: false }]);
    expect(c.actors.get(before)?.status).toBe('error');
    const kinds = c.timeline.toArray().map((e) => `${e.kind} ${e.subject}`);
    expect(kinds.slice(-3)).toEqual(['exit root/job-1', 'restart root/job-1', 'start root/job-1']);
  });

  it('keeps each actor’s last events with their source', async () => {
    const w = await startWorkload({ eventsPerActor: 3 });
    root = w.root;
    const ref = w.root.child('job-1') as { send(e: unknown): void; sessionId: string };
    for (let i = 0; i < 5; i++) ref.send({ type: i % 2 === 0 ? 'START' : 'FINISH' });
    const rec = w.inspector.collector.actors.get(ref.sessionId)!;
    expect(rec.events.toArray().map((e) => e.type)).toEqual(['START', 'FINISH', 'START']);
    // The invoked ticker got xstate.init from its parent: the source is the parent.
    const ticker = [...w.inspector.collector.actors.values()].find(
      (a) => a.parentId === ref.sessionId && a.status === 'active',
    )!;
    expect(ticker.id).toBe('ticker');
    expect(ticker.events.toArray()[0]).toMatchObject({
      type: 'xstate.init',
      sourceId: ref.sessionId,
    });
  });

  it('stays bounded: dead actors beyond keepDead and actors beyond maxActors are evicted', () => {
    const c = new InspectionCollector({ clock: testClock(), keepDead: 3, maxActors: 10 });
    const quick = fromPromise(async () => 1);
    for (let i = 0; i < 20; i++) createActor(job, { inspect: c.observer }).start().stop();
    expect(c.actors.size).toBeLessThanOrEqual(3);
    const live = Array.from({ length: 15 }, () =>
      createActor(quick, { inspect: c.observer }).start(),
    );
    expect(c.actors.size).toBeLessThanOrEqual(10);
    expect(c.stats().evicted).toBeGreaterThan(0);
    for (const a of live) a.stop();
  });

  it('never throws into XState: a failing frame is counted and kept', () => {
    const c = new InspectionCollector({ clock: testClock() });
    c.changed = () => {
      throw new Error('listener broke');
    };
    const a = createActor(job, { inspect: c.observer }).start();
    expect(() => a.send({ type: 'START' })).not.toThrow();
    expect(c.stats().observerErrors).toBeGreaterThan(0);
    expect((c.stats().lastError as Error).message).toBe('listener broke');
    a.stop();
  });

  it('with nobody watching, never calls out', async () => {
    const w = await startWorkload();
    root = w.root;
    expect(w.inspector.collector.changed).toBeNull();
  });
});
