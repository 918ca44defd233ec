import { describe, expect, it } from 'vitest';
import { createActor, setup } from 'xstate';
import {
  activeMonitorCount,
  type DownEvent,
  demonitor,
  monitor,
  startSupervisor,
} from '../../src/supervisor/index.js';
import { settle, worker } from './workers.js';

describe('monitor', () => {
  it('delivers one DOWN with the exit reason to a callback', async () => {
    const target = createActor(worker).start();
    const downs: DownEvent[] = [];
    const ref = monitor((d) => downs.push(d), target);
    target.send({ type: 'EXIT', exit: { shutdown: 'drained' } });
    await settle();
    expect(downs).toEqual([{ type: 'DOWN', ref, id: target.id, reason: { shutdown: 'drained' } }]);
  });

  it('delivers DOWN as an event to an XState watcher, with an error reason for a crash', async () => {
    const watcher = createActor(
      setup({ types: {} as { context: { downs: DownEvent[] }; events: DownEvent } }).createMachine({
        context: { downs: [] },
        on: { DOWN: { actions: ({ context, event }) => context.downs.push(event) } },
      }),
    ).start();
    const target = createActor(worker);
    target.subscribe({ error: () => {} });
    target.start();
    monitor(watcher, target);
    target.send({ type: 'CRASH' });
    await settle();
    const [down] = watcher.getSnapshot().context.downs;
    expect(((down as DownEvent).reason as { error: Error }).error.message).toBe('boom');
  });

  it('a stopped target gives DOWN killed; a gone one gives noproc at once', async () => {
    const target = createActor(worker).start();
    const downs: DownEvent[] = [];
    monitor((d) => downs.push(d), target);
    target.stop();
    monitor((d) => downs.push(d), target);
    await settle();
    expect(downs.map((d) => d.reason)).toEqual(['killed', 'noproc']);
  });

  it('demonitor stops a monitor; flush drops a DOWN already sent', async () => {
    const target = createActor(worker).start();
    const downs: DownEvent[] = [];
    const before = activeMonitorCount();
    const a = monitor((d) => downs.push(d), target);
    const b = monitor((d) => downs.push(d), target);
    const c = monitor((d) => downs.push(d), target);
    expect(demonitor(a)).toBe(true);
    target.send({ type: 'EXIT' });
    // b and c's DOWN are sent, not yet received
    expect(demonitor(b, { flush: true })).toBe(false);
    expect(demonitor(c)).toBe(false);
    await settle();
    expect(downs.map((d) => d.ref)).toEqual([c]);
    expect(activeMonitorCount()).toBe(before);
  });

  it('monitors a supervisor, and the reason a supervisor gave its child', async () => {
    const sup = await startSupervisor({ children: [{ id: 'w', start: { logic: worker } }] });
    const downs: DownEvent[] = [];
    monitor((d) => downs.push(d), sup.child('w')!);
    monitor((d) => downs.push(d), sup);
    await sup.shutdown();
    await settle();
    expect(downs.map((d) => [d.id, d.reason])).toEqual([
      ['w', 'shutdown'],
      [sup.id, 'shutdown'],
    ]);
  });
});
