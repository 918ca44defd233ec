import { expect, test } from 'vitest';
import * as exit from '../../src/actors/runtimeExit.js';
import type { SupervisorEvent } from '../../src/supervisor/events.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/actors/runtimeExit.ts', import.meta.url), exit);

const crashed = (childId: string, reason: 'killed' | 'normal' = 'killed'): SupervisorEvent => ({
  type: 'roundtable.child.exited',
  supervisorId: 'root',
  childId,
  reason,
});

test('a give-up names the last crash the root saw and the intensity it reached', () => {
  const events: SupervisorEvent[] = [
    crashed('runnerPool'),
    {
      type: 'roundtable.child.restarting',
      supervisorId: 'root',
      childId: 'runnerPool',
      delayMs: 0,
    },
    crashed('reconciler'),
    crashed('heartbeat', 'normal'),
    {
      type: 'roundtable.supervisor.intensity_reached',
      supervisorId: 'root',
      intensity: 3,
      periodMs: 5_000,
    },
  ];
  const seen = events.reduce((s, e) => exit.noteRootEvent(s, e, 'root'), exit.NO_CRASHES);
  expect(exit.classifyExit(undefined, 'shutdown', seen)).toEqual({
    kind: 'gave_up',
    reason: 'shutdown',
    lastCrash: { childId: 'reconciler', reason: 'killed' },
    intensity: { restarts: 3, periodMs: 5_000 },
  });
});

test('stop() and kill() win over whatever the root saw', () => {
  const seen = exit.noteRootEvent(exit.NO_CRASHES, crashed('runnerPool'), 'root');
  expect(exit.classifyExit('stop', { error: new Error('boom') }, seen)).toEqual({
    kind: 'stopped',
  });
  expect(exit.classifyExit('kill', 'killed', seen)).toEqual({ kind: 'killed' });
});

test('a stopped error keeps the exit and takes a message of its own', () => {
  const e = new exit.RuntimeStoppedError(
    { kind: 'stopped' },
    'the runtime stopped before the command ran',
  );
  expect(e.exit).toEqual({ kind: 'stopped' });
  expect(e.message).toBe('the runtime stopped before the command ran');
  expect(e.name).toBe('RuntimeStoppedError');
});
