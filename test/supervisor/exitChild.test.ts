/**
 * `exitChild`: OTP's exit(Pid, Reason) on a supervised child. The child is
 * stopped with that reason and the supervisor applies its restart policy;
 * unlike terminateChild, the spec stays.
 */
import { describe, expect, it } from 'vitest';
import { type AnyActorRef, createActor, SimulatedClock, setup } from 'xstate';
import * as mod from '../../src/supervisor/exitChild.js';
import {
  type DownEvent,
  type ExitSignal,
  monitor,
  NoProcError,
  NotFoundError,
  type RestartType,
  type SupervisorEvent,
  startSupervisor,
  supervisorOfShell,
} from '../../src/supervisor/index.js';
import { runDocExamples } from '../support/docExamples.js';
import { settle, worker } from './workers.js';

runDocExamples(new URL('../../src/supervisor/exitChild.ts', import.meta.url), mod);

const SHELL_TEST_ID = 'exit-shell-test';

async function withChild(restart: RestartType, extra: { intensity?: number } = {}) {
  const clock = new SimulatedClock();
  const events: SupervisorEvent[] = [];
  const sup = await startSupervisor(
    {
      ...extra,
      children: [
        { id: 'a', start: { logic: worker } },
        { id: 'b', start: { logic: worker }, restart },
      ],
    },
    { clock },
  );
  sup.subscribe((e) => events.push(e));
  return { sup, events, clock };
}

// OTP: permanent restarts on any exit, transient only on an abnormal one,
// temporary never (and its spec is dropped).
const restarted: Record<RestartType, Record<string, boolean>> = {
  permanent: { kill: true, normal: true, shutdown: true, error: true },
  transient: { kill: true, normal: false, shutdown: false, error: true },
  temporary: { kill: false, normal: false, shutdown: false, error: false },
};
const signals: Record<string, ExitSignal> = {
  kill: 'kill',
  normal: 'normal',
  shutdown: { shutdown: 'operator' },
  error: { error: new Error('injected') },
};

describe('exitChild', () => {
  const rows = (['permanent', 'transient', 'temporary'] as const).flatMap((t) =>
    Object.keys(signals).map((s) => [t, s] as const),
  );
  it.each(rows)('%s child, exit %s: restarted as OTP says', async (restart, signal) => {
    const { sup, events } = await withChild(restart);
    const first = sup.child('b') as AnyActorRef;
    await sup.exitChild('b', signals[signal]!);
    await settle();
    const again = restarted[restart][signal]!;
    expect(first.getSnapshot().status).toBe('stopped');
    const row = sup.whichChildren().find((c) => c.id === 'b');
    if (again) {
      expect(row).toMatchObject({ status: 'running', restartCount: 1 });
      expect(sup.child('b')).not.toBe(first);
    } else if (restart === 'temporary') {
      expect(row).toBeUndefined();
    } else {
      expect(row).toMatchObject({ status: 'stopped', restartCount: 0 });
    }
    // The sibling is untouched (one_for_one) and the exit is reported once.
    expect(sup.whichChildren().find((c) => c.id === 'a')?.restartCount).toBe(0);
    const exits = events.filter((e) => e.type === 'roundtable.child.exited');
    expect(exits).toHaveLength(1);
    expect(exits[0]).toMatchObject({
      childId: 'b',
      reason: signal === 'kill' ? 'killed' : signals[signal],
    });
    await sup.shutdown();
  });

  it('counts toward the intensity: a kill past it shuts the supervisor down', async () => {
    const { sup, events } = await withChild('permanent', { intensity: 1 });
    await sup.exitChild('b', 'kill');
    expect(sup.whichChildren().find((c) => c.id === 'b')?.restartCount).toBe(1);
    await sup.exitChild('b', 'kill');
    await settle();
    expect(events.some((e) => e.type === 'roundtable.supervisor.intensity_reached')).toBe(true);
    expect(sup.exitReason()).toBe('shutdown');
  });

  it('monitors of the child read the reason it was exited with', async () => {
    const { sup } = await withChild('permanent');
    const downs: DownEvent[] = [];
    monitor((d) => downs.push(d), sup.child('b') as AnyActorRef);
    await sup.exitChild('b', { shutdown: 'operator' });
    await settle();
    expect(downs.map((d) => d.reason)).toEqual([{ shutdown: 'operator' }]);
    await sup.shutdown();
  });

  it('exits a nested supervisor (its children stop, it is restarted)', async () => {
    const sup = await startSupervisor({
      children: [
        { id: 'sub', start: { supervisor: { children: [{ id: 'w', start: { logic: worker } }] } } },
      ],
    });
    const w = sup.childSupervisor('sub')?.child('w') as AnyActorRef;
    await sup.exitChild('sub');
    await settle();
    expect(w.getSnapshot().status).toBe('stopped');
    expect(sup.whichChildren()[0]).toMatchObject({ status: 'running', restartCount: 1 });
    await sup.shutdown();
  });

  it('rejects an unknown child, a child not running, and a stopped supervisor, with typed errors', async () => {
    const { sup } = await withChild('transient');
    await expect(sup.exitChild('nope')).rejects.toBeInstanceOf(NotFoundError);
    await sup.exitChild('b', 'normal');
    await expect(sup.exitChild('b')).rejects.toMatchObject({ code: 'NOPROC', target: 'b' });
    await sup.shutdown();
    await expect(sup.exitChild('a')).rejects.toBeInstanceOf(NoProcError);
  });

  it('finds a supervisor from its inspection shell, and nothing from another actor', async () => {
    const shells: AnyActorRef[] = [];
    const sup = await startSupervisor(
      { id: SHELL_TEST_ID, children: [{ id: 'a', start: { logic: worker } }] },
      {
        inspect: (ev) => {
          if (ev.type === '@xstate.actor' && (ev.actorRef as AnyActorRef).id === SHELL_TEST_ID)
            shells.push(ev.actorRef as AnyActorRef);
        },
      },
    );
    expect(supervisorOfShell(shells[0]!)).toBe(sup);
    expect(supervisorOfShell(sup.child('a') as AnyActorRef)).toBeUndefined();
    expect(supervisorOfShell(createActor(setup({}).createMachine({})))).toBeUndefined();
    await sup.shutdown();
  });
});
