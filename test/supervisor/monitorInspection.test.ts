/**
 * Monitors in the inspection stream: a supervisor started with `inspect`
 * lets `monitor()` find the observer through the target (or the watcher),
 * with no argument from the caller.
 */
import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { type AnyActorRef, createActor, type InspectionEvent } from 'xstate';
import {
  type DownEvent,
  demonitor,
  MONITOR_SHELL_ID,
  type MonitorEvent,
  monitor,
  noteInspected,
  startSupervisor,
} from '../../src/supervisor/index.js';
import * as mod from '../../src/supervisor/monitorInspection.js';
import { runDocExamples } from '../support/docExamples.js';
import { settle, worker } from './workers.js';

runDocExamples(new URL('../../src/supervisor/monitorInspection.ts', import.meta.url), mod);

function recorder() {
  const seen: MonitorEvent[] = [];
  const snapshots: unknown[] = [];
  const inspect = (ev: InspectionEvent) => {
    if ((ev.actorRef as AnyActorRef).id !== MONITOR_SHELL_ID) return;
    if (ev.type === '@xstate.event' && ev.event.type.startsWith('roundtable.'))
      seen.push(ev.event as MonitorEvent);
    if (ev.type === '@xstate.snapshot')
      snapshots.push((ev.snapshot as unknown as { context: unknown }).context);
  };
  return { seen, snapshots, inspect };
}

describe('monitors seen by an inspector', () => {
  it('tells monitor then down, with both sessionIds, after the watcher got its DOWN', async () => {
    const r = recorder();
    const sup = await startSupervisor(
      {
        children: [
          { id: 'watcher', start: { logic: worker } },
          { id: 'target', start: { logic: worker }, restart: 'temporary' },
        ],
      },
      { inspect: r.inspect },
    );
    const watcher = sup.child('watcher') as AnyActorRef;
    const target = sup.child('target') as AnyActorRef;
    const order: string[] = [];
    const ref = monitor(
      { sessionId: watcher.sessionId, send: (d: DownEvent) => order.push(`DOWN ${d.ref}`) },
      target,
    );
    const edge = {
      ref,
      watcherSessionId: watcher.sessionId,
      targetSessionId: target.sessionId,
      targetId: 'target',
    };
    expect(r.seen).toEqual([{ type: 'roundtable.monitor', ...edge }]);
    const inspectLen = r.seen.length;
    target.send({ type: 'EXIT' });
    await settle();
    expect(r.seen.slice(inspectLen)).toEqual([
      { type: 'roundtable.down', reason: 'normal', ...edge },
    ]);
    expect(order).toEqual([`DOWN ${ref}`]);
    expect(r.snapshots.at(-1)).toEqual({ live: 0 });
    await sup.shutdown();
  });

  it('an actor watcher is named by its own sessionId; a callback by null; demonitor is told', async () => {
    const r = recorder();
    const sup = await startSupervisor(
      {
        children: [
          { id: 'a', start: { logic: worker } },
          { id: 'b', start: { logic: worker } },
        ],
      },
      { inspect: r.inspect },
    );
    const a = sup.child('a') as AnyActorRef;
    const b = sup.child('b') as AnyActorRef;
    const byActor = monitor(a, b);
    const byFn = monitor(() => {}, b);
    expect(r.snapshots.at(-1)).toEqual({ live: 2 });
    expect(demonitor(byActor)).toBe(true);
    expect(demonitor(byFn)).toBe(true);
    expect(r.seen.map((e) => [e.type, e.ref, e.watcherSessionId])).toEqual([
      ['roundtable.monitor', byActor, a.sessionId],
      ['roundtable.monitor', byFn, null],
      ['roundtable.demonitor', byActor, a.sessionId],
      ['roundtable.demonitor', byFn, null],
    ]);
    expect(r.snapshots.at(-1)).toEqual({ live: 0 });
    await sup.shutdown();
  });

  it('a flushed DOWN is a demonitor, never a down', async () => {
    const r = recorder();
    const sup = await startSupervisor(
      { children: [{ id: 'a', start: { logic: worker }, restart: 'temporary' }] },
      { inspect: r.inspect },
    );
    const ref = monitor(() => {}, sup.child('a') as AnyActorRef);
    (sup.child('a') as AnyActorRef).send({ type: 'EXIT' });
    expect(demonitor(ref, { flush: true })).toBe(false);
    await settle();
    expect(r.seen.map((e) => e.type)).toEqual(['roundtable.monitor', 'roundtable.demonitor']);
    await sup.shutdown();
  });

  it('finds the observer through the watcher when the target is not supervised, and a supervisor target by its sessionId', async () => {
    const r = recorder();
    const sup = await startSupervisor(
      { children: [{ id: 'w', start: { logic: worker } }] },
      { inspect: r.inspect },
    );
    const loose = createActor(worker).start();
    monitor(sup.child('w') as AnyActorRef, loose);
    monitor(sup.child('w') as AnyActorRef, sup);
    expect(r.seen.map((e) => [e.targetId, e.targetSessionId])).toEqual([
      [loose.id, loose.sessionId],
      [sup.id, sup.sessionId],
    ]);
    loose.stop();
    await sup.shutdown();
    await settle();
    expect(r.seen.filter((e) => e.type === 'roundtable.down').map((e) => e.reason)).toEqual([
      'killed',
      'shutdown',
    ]);
  });

  it('tells nobody when nothing is inspected, and an actor noted by hand is seen', async () => {
    const r = recorder();
    const a = createActor(worker).start();
    const b = createActor(worker, { inspect: r.inspect }).start();
    monitor(() => {}, a);
    monitor(() => {}, b);
    expect(r.seen).toEqual([]);
    noteInspected(b, r.inspect);
    monitor(() => {}, b);
    expect(r.seen.map((e) => e.targetSessionId)).toEqual([b.sessionId]);
    a.stop();
    b.stop();
    await settle();
  });
});

describe('monitor events, property', () => {
  type Op =
    | { kind: 'monitor'; watcher: number; target: number }
    | { kind: 'demonitor'; pick: number; flush: boolean }
    | { kind: 'exit'; target: number };
  const op: fc.Arbitrary<Op> = fc.oneof(
    fc.record({ kind: fc.constant('monitor' as const), watcher: fc.nat(2), target: fc.nat(2) }),
    fc.record({ kind: fc.constant('demonitor' as const), pick: fc.nat(20), flush: fc.boolean() }),
    fc.record({ kind: fc.constant('exit' as const), target: fc.nat(2) }),
  );

  test.prop([fc.array(op, { maxLength: 30 }), fc.boolean()], { numRuns: 60 })(
    'every monitor is told once, and ends told once: down iff its DOWN was delivered',
    async (ops, settleBetween) => {
      const r = recorder();
      const sup = await startSupervisor(
        {
          children: [0, 1, 2].map((i) => ({
            id: `w${i}`,
            start: { logic: worker },
            restart: 'temporary' as const,
          })),
        },
        { inspect: r.inspect },
      );
      const actors = [0, 1, 2].map((i) => sup.child(`w${i}`) as AnyActorRef);
      const refs: string[] = [];
      const delivered = new Set<string>();
      for (const o of ops) {
        if (o.kind === 'monitor') {
          const target = actors[o.target]!;
          refs.push(monitor((d) => delivered.add(d.ref), target));
        } else if (o.kind === 'demonitor' && refs.length > 0) {
          demonitor(refs[o.pick % refs.length] as never, { flush: o.flush });
        } else if (o.kind === 'exit') {
          const a = actors[o.target]!;
          if (a.getSnapshot().status === 'active') a.send({ type: 'EXIT' });
        }
        if (settleBetween) await settle();
      }
      await settle();
      for (const a of actors) if (a.getSnapshot().status === 'active') a.send({ type: 'EXIT' });
      await settle();
      for (const ref of refs) {
        const told = r.seen.filter((e) => e.ref === ref).map((e) => e.type);
        expect(told[0]).toBe('roundtable.monitor');
        expect(told).toHaveLength(2);
        expect(told[1]).toBe(delivered.has(ref) ? 'roundtable.down' : 'roundtable.demonitor');
      }
      const last: unknown = r.snapshots.at(-1) ?? { live: 0 };
      expect(last).toEqual({ live: 0 });
      await sup.shutdown();
    },
  );
});
