/**
 * Monitors in the inspector: the pure fold, and the collector fed by a real
 * supervised workload (watchers named, inferred, or learnt from a DOWN).
 */
import { describe, expect, it } from 'vitest';
import { type AnyActorRef, createActor, setup } from 'xstate';
import { type DownEvent, demonitor, monitor } from '../../../src/supervisor/monitor.js';
import { MONITOR_SHELL_ID as SUPERVISOR_SHELL_ID } from '../../../src/supervisor/monitorInspection.js';
import * as mod from '../../../src/ui-server/inspector/inspectorMonitors.js';
import { runDocExamples } from '../../support/docExamples.js';
import { startWorkload } from './fixtures.js';

runDocExamples(
  new URL('../../../src/ui-server/inspector/inspectorMonitors.ts', import.meta.url),
  mod,
);

const settle = async () => {
  for (let i = 0; i < 10; i++) await Promise.resolve();
};

describe('inspector monitors', () => {
  it('names the monitor shell as the supervisor layer does', () => {
    expect(mod.MONITOR_SHELL_ID).toBe(SUPERVISOR_SHELL_ID);
  });

  it('keeps at most MAX_MONITORS, the oldest out first', () => {
    let m: mod.MonitorMap = {};
    for (let i = 1; i <= mod.MAX_MONITORS + 2; i++) {
      const ref = `#Monitor<${i}>` as const;
      m = mod.applyMonitorEvent(
        m,
        {
          type: 'roundtable.monitor',
          ref,
          watcherSessionId: 'w',
          targetSessionId: 't',
          targetId: 't',
        },
        i,
        null,
      );
    }
    expect(Object.keys(m)).toHaveLength(mod.MAX_MONITORS);
    expect(m['#Monitor<1>']).toBeUndefined();
    expect(m['#Monitor<3>']).toBeDefined();
  });

  it('shows edges for a supervised watcher, drops them on demonitor, and puts DOWN on the timeline', async () => {
    const w = await startWorkload();
    const c = w.inspector.collector;
    const job1 = w.root.child('job-1') as AnyActorRef;
    const job2 = w.root.child('job-2') as AnyActorRef;
    const named = monitor(job1, job2);
    const loose = monitor(() => {}, job2);
    expect(c.tree.monitors[named]).toMatchObject({
      watcherSessionId: job1.sessionId,
      targetSessionId: job2.sessionId,
      targetId: 'job-2',
      inferred: false,
    });
    // Made from plain code, right after nothing: no watcher to infer.
    expect(c.tree.monitors[loose]?.watcherSessionId).toBeNull();
    demonitor(loose);
    expect(c.tree.monitors[loose]).toBeUndefined();
    job2.send({ type: 'CRASH' });
    await settle();
    expect(c.tree.monitors[named]).toBeUndefined();
    const downs = c.timeline.since(0).items.filter((e) => e.kind === 'down');
    expect(downs).toHaveLength(1);
    expect(downs[0]).toMatchObject({
      subject: 'job-2',
      sessionId: job1.sessionId,
      alarm: true,
      text: `DOWN to job-1: error: boom (${named})`,
    });
    // The shell is no actor row.
    expect([...c.actors.values()].some((a) => a.id === mod.MONITOR_SHELL_ID)).toBe(false);
    await w.root.shutdown();
  });

  it('infers the watcher of a callback monitor made while an actor handles an event, and learns one from DOWN', async () => {
    const w = await startWorkload();
    const c = w.inspector.collector;
    const target = w.root.child('job-2') as AnyActorRef;
    // A watcher machine that monitors from its own action through a forwarding callback.
    const refs: string[] = [];
    const watcherLogic = setup({
      types: {} as { events: { type: 'WATCH' } | DownEvent },
    }).createMachine({
      on: {
        WATCH: {
          actions: ({ self }) => {
            refs.push(monitor({ send: (d: DownEvent) => self.send(d) }, target));
          },
        },
      },
    });
    const watcher = (await w.root.startChild({
      id: 'watcher',
      start: { logic: watcherLogic },
    })) as AnyActorRef;
    watcher.send({ type: 'WATCH' });
    expect(c.tree.monitors[refs[0]!]).toMatchObject({
      watcherSessionId: watcher.sessionId,
      inferred: true,
    });
    // A callback monitor from outside any actor: unknown until its DOWN lands on an actor.
    const other = createActor(setup({}).createMachine({})).start();
    const ref = monitor((d) => watcher.send(d), target);
    expect(c.tree.monitors[ref]?.watcherSessionId).toBeNull();
    target.send({ type: 'CRASH' });
    await settle();
    const lines = c.timeline.since(0).items.filter((e) => e.kind === 'down');
    expect(lines.map((l) => l.sessionId)).toEqual([watcher.sessionId, watcher.sessionId]);
    other.stop();
    await w.root.shutdown();
  });
});
