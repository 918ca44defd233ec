/**
 * How a runtime's tree ends, over a root that records what is asked of it:
 * `stop()` in the order other nodes rely on (tree, shell, heartbeat row,
 * leader lock, boot lock), once; `kill()` all at once; a root that exits on
 * its own is a give-up that stops the shell. The whole runtime's stop is
 * test/actors/runtime.lifecycle.test.ts and runtime.heartbeat.test.ts.
 */
import { expect, test } from 'vitest';
import { type EndingRoot, TreeEnd } from '../../src/actors/runtimeStop.js';
import type { SupervisorEvent } from '../../src/supervisor/events.js';
import type { ExitReason } from '../../src/supervisor/exitReason.js';

function setup(o: { endBeatFails?: boolean; leader?: boolean } = {}) {
  const steps: string[] = [];
  const errors: unknown[] = [];
  const ended: unknown[] = [];
  const events: Array<(e: SupervisorEvent) => void> = [];
  const exits: Array<(r: ExitReason) => void> = [];
  const exit = (reason: ExitReason) => {
    for (const l of exits) l(reason);
  };
  const root: EndingRoot = {
    id: 'root',
    subscribe: (l) => {
      events.push(l);
      return () => {};
    },
    onExit: (l) => {
      exits.push(l);
      return () => {};
    },
    async shutdown() {
      steps.push('tree');
      exit('shutdown');
    },
    kill() {
      steps.push('tree killed');
      exit('killed');
    },
  };
  const end = new TreeEnd({
    root,
    shutDownShell: () => steps.push('shell'),
    endBeat: async () => {
      steps.push('beat row');
      if (o.endBeatFails) throw new Error('store down');
    },
    leader:
      o.leader === false
        ? undefined
        : {
            release: async () => {
              steps.push('leader released');
            },
            drop: () => steps.push('leader dropped'),
          },
    cluster: () => ({
      stop: async () => {
        steps.push('boot lock released');
      },
      kill: () => steps.push('boot lock dropped'),
    }),
    onEnded: (e) => ended.push(e),
    onError: (e) => errors.push(e),
  });
  const emit = (e: SupervisorEvent) => {
    for (const l of events) l(e);
  };
  return { end, steps, errors, ended, exit, emit };
}

test('stop: the tree, the shell, the heartbeat row, the leader lock, then the boot lock; once', async () => {
  const { end, steps, ended } = setup();
  expect(end.ending()).toBeUndefined();
  const first = end.stop();
  expect(end.ending()).toBe('stop');
  expect(end.stop()).toBe(first);
  await first;
  expect(steps).toEqual(['tree', 'shell', 'beat row', 'leader released', 'boot lock released']);
  expect(await end.exited).toEqual({ kind: 'stopped' });
  expect(ended).toEqual([{ kind: 'stopped' }]);
});

test('stop: a heartbeat row the store cannot delete is reported, and the locks still go', async () => {
  const { end, steps, errors } = setup({ endBeatFails: true, leader: false });
  await end.stop();
  expect(steps).toEqual(['tree', 'shell', 'beat row', 'boot lock released']);
  expect(errors).toMatchObject([{ message: 'store down' }]);
});

test('kill: the locks dropped, the shell, then the tree, with no cleanup', async () => {
  const { end, steps, ended } = setup();
  end.kill();
  expect(end.ending()).toBe('kill');
  expect(steps).toEqual(['leader dropped', 'boot lock dropped', 'shell', 'tree killed']);
  expect(await end.exited).toEqual({ kind: 'killed' });
  expect(ended).toEqual([{ kind: 'killed' }]);
  // A stop after a kill is still a kill.
  await end.stop();
  expect(end.ending()).toBe('kill');
});

test('a root that exits on its own gave up: the shell stops, and the exit says what the root saw', async () => {
  const { end, steps, ended, exit, emit } = setup();
  emit({
    type: 'roundtable.child.exited',
    supervisorId: 'root',
    childId: 'runnerPool',
    reason: 'killed',
  });
  emit({
    type: 'roundtable.child.exited',
    supervisorId: 'taskRunners',
    childId: 'ses_1',
    reason: 'killed',
  });
  emit({
    type: 'roundtable.supervisor.intensity_reached',
    supervisorId: 'root',
    intensity: 3,
    periodMs: 5000,
  });
  exit('shutdown');
  const gaveUp = {
    kind: 'gave_up',
    reason: 'shutdown',
    lastCrash: { childId: 'runnerPool', reason: 'killed' },
    intensity: { restarts: 3, periodMs: 5000 },
  };
  expect(await end.exited).toEqual(gaveUp);
  expect(ended).toEqual([gaveUp]);
  expect(steps).toEqual(['shell']);
  expect(end.ending()).toBeUndefined();
});
