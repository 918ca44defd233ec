import { describe, expect, it } from 'vitest';
import { SimulatedClock } from 'xstate';
import {
  type DownEvent,
  monitor,
  type SupervisorEvent,
  startSupervisor,
} from '../../src/supervisor/index.js';
import { graceful, settle, worker } from './workers.js';

/**
 * The runtime's tree in miniature: a pool (started first, so stopped last)
 * that monitors the runners of a nested supervisor started after it. A DOWN
 * the pool handles while it still runs is a runner lost, and the runtime
 * gives that run back to the line instead of leaving it for adoption.
 */
async function poolAndRunners(runner: typeof worker | typeof graceful) {
  const clock = new SimulatedClock();
  const root = await startSupervisor(
    {
      id: 'root',
      children: [
        { id: 'pool', start: { logic: worker } },
        { id: 'runners', start: { supervisor: { children: [] } } },
        { id: 'heartbeat', start: { logic: worker } },
      ],
    },
    { clock },
  );
  const runners = root.childSupervisor('runners');
  if (runners === undefined) throw new Error('runners did not start');
  const downsSeenByPool: DownEvent[] = [];
  const ref = await runners.startChild({ id: 'run-1', start: { logic: runner }, shutdown: 1000 });
  // As the RunnerPool's holder watch: a DOWN counts only while the pool runs.
  monitor((down) => {
    if (root.childStatus('pool') === 'running') downsSeenByPool.push(down);
  }, ref);
  const events: string[] = [];
  const note = (e: SupervisorEvent) => {
    if (e.type === 'roundtable.child.exited') events.push(`${e.childId}:${String(e.reason)}`);
    if (e.type === 'roundtable.supervisor.shutdown') events.push(`${e.supervisorId} exit`);
  };
  root.subscribe(note);
  runners.subscribe(note);
  return { clock, root, downsSeenByPool, events };
}

describe('stopAllChildren, through shutdown', () => {
  it('a tree whose children stop at once is stopped in one pass, nested supervisors included: no sibling stopped later sees a DOWN', async () => {
    const { root, downsSeenByPool, events } = await poolAndRunners(worker);
    const stopped = root.shutdown();
    // Nothing trapped the shutdown, so nothing was waited for: the whole
    // tree went down before any microtask (a DOWN is one) could run.
    expect(root.exitReason()).toBe('shutdown');
    expect(events).toEqual([
      'heartbeat:shutdown',
      'run-1:shutdown',
      'runners exit',
      'runners:shutdown',
      'pool:shutdown',
      'root exit',
    ]);
    await stopped;
    await settle();
    expect(downsSeenByPool).toEqual([]);
  });

  it('a child that traps the shutdown is waited for, and the siblings before it stop only after it', async () => {
    const { clock, root, downsSeenByPool, events } = await poolAndRunners(graceful);
    const stopped = root.shutdown();
    expect(root.exitReason()).toBeUndefined();
    expect(root.childStatus('pool')).toBe('running');
    clock.increment(100);
    await stopped;
    expect(events.slice(-3)).toEqual(['runners:shutdown', 'pool:shutdown', 'root exit']);
    // The pool still ran while the runner drained: its DOWN is the
    // runtime's to judge (it knows it is stopping), not a lost runner here.
    expect(downsSeenByPool.map((d) => d.id)).toEqual(['run-1']);
  });
});
