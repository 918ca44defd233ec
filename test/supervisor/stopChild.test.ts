import { describe, expect, it } from 'vitest';
import { SimulatedClock } from 'xstate';
import {
  type DownEvent,
  monitor,
  type SupervisorEvent,
  startDynamicSupervisor,
} from '../../src/supervisor/index.js';
import { settle, stubborn, worker } from './workers.js';

describe('stopChild, through terminateChild and shutdown', () => {
  it('monitors read the reason each shutdown spec gives', async () => {
    const clock = new SimulatedClock();
    const sup = await startDynamicSupervisor({}, { clock });
    const downs: [string, unknown][] = [];
    const watch = (d: DownEvent) => downs.push([d.id, d.reason]);
    monitor(
      watch,
      await sup.startChild({ id: 'brutal', start: { logic: worker }, shutdown: 'brutal_kill' }),
    );
    monitor(watch, await sup.startChild({ id: 'plain', start: { logic: worker } }));
    monitor(
      watch,
      await sup.startChild({ id: 'stubborn', start: { logic: stubborn }, shutdown: 50 }),
    );
    await sup.terminateChild('brutal');
    await sup.terminateChild('plain');
    const last = sup.terminateChild('stubborn');
    // The job runs once the mailbox has let go of the previous one.
    await settle();
    clock.increment(49);
    await settle();
    expect(downs).toHaveLength(2);
    clock.increment(1);
    await last;
    await settle();
    expect(downs).toEqual([
      ['brutal', 'killed'],
      ['plain', 'shutdown'],
      ['stubborn', 'killed'],
    ]);
    expect(sup.countChildren().specs).toBe(0);
    await sup.shutdown();
  });

  it('a listener subscribed after the start still sees every stop, in reverse order', async () => {
    const sup = await startDynamicSupervisor();
    for (const id of ['a', 'b', 'c'])
      await sup.startChild({ id, start: { logic: worker }, shutdown: 'brutal_kill' });
    const seen: string[] = [];
    sup.subscribe((e: SupervisorEvent) => {
      if (e.type === 'roundtable.child.exited') seen.push(`${e.childId}:${String(e.reason)}`);
      else seen.push(e.type);
    });
    await sup.shutdown();
    expect(seen).toEqual(['c:killed', 'b:killed', 'a:killed', 'roundtable.supervisor.shutdown']);
  });
});
