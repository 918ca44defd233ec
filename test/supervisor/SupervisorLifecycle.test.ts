import { describe, expect, it } from 'vitest';
import { SimulatedClock } from 'xstate';
import { ChildTable } from '../../src/supervisor/ChildTable.js';
import { validateChildSpec } from '../../src/supervisor/childSpec.js';
import { NoProcError } from '../../src/supervisor/errors.js';
import type { SupervisorEvent } from '../../src/supervisor/events.js';
import type { ExitReason } from '../../src/supervisor/exitReason.js';
import { SupervisorLifecycle } from '../../src/supervisor/SupervisorLifecycle.js';
import { SupervisorOutbox } from '../../src/supervisor/SupervisorOutbox.js';
import { resolveRuntime } from '../../src/supervisor/supervisorSpec.js';
import { worker } from './workers.js';

/** A lifecycle over children that never started (nothing to stop but records). */
function lifecycle(ids: string[] = []) {
  const children = new ChildTable();
  for (const id of ids)
    children.add(validateChildSpec({ id, start: { logic: worker } }), undefined);
  const out = new SupervisorOutbox('sup', undefined, () => {});
  const seen: string[] = [];
  out.events.add((e: SupervisorEvent) => {
    if (e.type === 'roundtable.child.exited') seen.push(`${e.childId}:${String(e.reason)}`);
    else seen.push(e.type);
  });
  const exits: ExitReason[] = [];
  out.exits.add((r) => exits.push(r));
  const runtime = resolveRuntime({ clock: new SimulatedClock() });
  const life = new SupervisorLifecycle({ id: 'sup', runtime, children, out, shell: undefined });
  return { life, seen, exits };
}

describe('SupervisorLifecycle', () => {
  it('takes calls only between started() and the exit', () => {
    const { life } = lifecycle();
    expect(life.admit()).toBeInstanceOf(NoProcError);
    life.started();
    expect(life.running).toBe(true);
    expect(life.admit()).toBeUndefined();
    void life.stopAll('shutdown');
    expect(life.admit()).toBeInstanceOf(NoProcError);
  });

  it('with nothing to wait for, stopAll has exited before it returns; a second one is a no-op', async () => {
    const { life, seen, exits } = lifecycle(['a', 'b']);
    life.started();
    const first = life.stopAll('shutdown');
    expect(life.exited).toBe(true);
    expect(life.reason).toBe('shutdown');
    expect(exits).toEqual(['shutdown']);
    expect(seen).toEqual(['roundtable.supervisor.shutdown']);
    await first;
    await life.stopAll({ shutdown: 'again' });
    life.killAll('killed');
    expect(life.reason).toBe('shutdown');
    expect(exits).toEqual(['shutdown']);
  });

  it('killAll exits at once with its reason, told once', () => {
    const { life, exits } = lifecycle(['a']);
    life.started();
    life.killAll({ error: 'boom' });
    expect(life.reason).toEqual({ error: 'boom' });
    life.killAll('killed');
    expect(exits).toEqual([{ error: 'boom' }]);
  });
});
