/**
 * Faults inside the supervisor's own jobs: a listener that throws on any
 * event kind, a job that throws or rejects. None may wedge the mailbox,
 * stop a restart or leave `shutdown()` pending; errors go to `onError`.
 */
import { describe, expect, it } from 'vitest';
import { type AnyActorRef, createActor, SimulatedClock } from 'xstate';
import {
  type ChildSpec,
  ListenerError,
  Registry,
  type Supervisor,
  type SupervisorError,
  type SupervisorEvent,
  SupervisorJobError,
  startSupervisor,
} from '../../src/supervisor/index.js';
import { expectNoUncaught } from './noUncaught.js';
import { graceful, settle, worker } from './workers.js';

// Every test here also proves the Node process saw no uncaught error.
const uncaught = expectNoUncaught();

const crash = (sup: Supervisor, id: string) =>
  (sup.child(id) as AnyActorRef).send({ type: 'CRASH' });
const thrown = new Error('listener bug');

/** A supervisor whose errors are collected, on a simulated clock. */
async function start(children: ChildSpec[], extra: { intensity?: number } = {}) {
  const clock = new SimulatedClock();
  const errors: SupervisorError[] = [];
  const sup = await startSupervisor(
    { children, ...extra },
    { clock, onError: (e) => errors.push(e) },
  );
  return { sup, clock, errors };
}

/** Subscribes a listener that throws on `type` and records what it was given. */
function throwOn(sup: Supervisor, type: SupervisorEvent['type']): string[] {
  const seen: string[] = [];
  sup.subscribe((e) => {
    seen.push(e.type);
    if (e.type === type) throw thrown;
  });
  return seen;
}

describe('a listener that throws', () => {
  const restartKinds = [
    'roundtable.child.exited',
    'roundtable.child.restarting',
    'roundtable.child.started',
  ] as const;
  it.each(restartKinds)('on %s: the crashed permanent child is still restarted', async (kind) => {
    const { sup, errors } = await start([
      { id: 'w', start: { logic: worker } },
      { id: 'v', start: { logic: worker } },
    ]);
    throwOn(sup, kind);
    // A second, well-behaved listener still hears every event.
    const after: string[] = [];
    sup.subscribe((e) => after.push(e.type));
    const first = sup.child('w');
    crash(sup, 'w');
    await settle();
    expect(sup.child('w')).not.toBe(first);
    expect(sup.whichChildren().map((c) => [c.id, c.status, c.restartCount])).toEqual([
      ['w', 'running', 1],
      ['v', 'running', 0],
    ]);
    // childStatus (O(1), asked per grant) answers as whichChildren does.
    for (const c of sup.whichChildren()) expect(sup.childStatus(c.id)).toBe(c.status);
    expect(sup.childStatus('nobody')).toBeUndefined();
    expect(after).toEqual(restartKinds.map((k) => k));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(ListenerError);
    expect(errors[0]).toMatchObject({ code: 'LISTENER_FAILED', eventType: kind, cause: thrown });
    // The mailbox is free: later exits and calls are handled, shutdown settles.
    crash(sup, 'v');
    await settle();
    expect(sup.whichChildren()[1]?.restartCount).toBe(1);
    await sup.shutdown();
    expect(sup.exitReason()).toBe('shutdown');
  });

  it('on roundtable.child.backoff_exhausted: the child stays stopped, its siblings restart', async () => {
    const backoff = { minMs: 10, maxMs: 10, randomFactor: 0, resetAfterMs: 1000, maxRestarts: 0 };
    const { sup, errors } = await start([
      { id: 'w', start: { logic: worker }, backoff },
      { id: 'v', start: { logic: worker } },
    ]);
    throwOn(sup, 'roundtable.child.backoff_exhausted');
    crash(sup, 'w');
    await settle();
    crash(sup, 'v');
    await settle();
    expect(sup.whichChildren().map((c) => [c.id, c.status, c.restartCount])).toEqual([
      ['w', 'stopped', 0],
      ['v', 'running', 1],
    ]);
    expect([sup.childStatus('w'), sup.childStatus('v')]).toEqual(['stopped', 'running']);
    expect(errors.map((e) => (e as ListenerError).eventType)).toEqual([
      'roundtable.child.backoff_exhausted',
    ]);
    await sup.shutdown();
  });

  it('on roundtable.supervisor.intensity_reached: the supervisor still gives up and exits', async () => {
    const { sup, errors } = await start([{ id: 'w', start: { logic: worker } }], { intensity: 0 });
    const exited = new Promise((resolve) => sup.onExit(resolve));
    throwOn(sup, 'roundtable.supervisor.intensity_reached');
    crash(sup, 'w');
    await expect(exited).resolves.toBe('shutdown');
    await expect(sup.shutdown()).resolves.toBeUndefined();
    expect(errors).toMatchObject([{ eventType: 'roundtable.supervisor.intensity_reached' }]);
  });

  it('on roundtable.supervisor.shutdown: shutdown() settles and every exit listener is told', async () => {
    const { sup, errors } = await start([{ id: 'w', start: { logic: worker } }]);
    throwOn(sup, 'roundtable.supervisor.shutdown');
    const told: unknown[] = [];
    sup.onExit((r) => told.push(r));
    await sup.shutdown();
    expect(told).toEqual(['shutdown']);
    expect(errors).toMatchObject([{ eventType: 'roundtable.supervisor.shutdown' }]);
  });

  it('in onExit: the listeners after it are still told and shutdown() settles', async () => {
    const { sup, errors } = await start([{ id: 'w', start: { logic: worker } }]);
    sup.onExit(() => {
      throw thrown;
    });
    const told: unknown[] = [];
    sup.onExit((r) => told.push(r));
    await sup.shutdown();
    expect(told).toEqual(['shutdown']);
    // One registered after the exit is told on a microtask, guarded too.
    sup.onExit(() => {
      throw thrown;
    });
    await settle();
    expect(errors.map((e) => [e.code, (e as ListenerError).eventType])).toEqual([
      ['LISTENER_FAILED', 'exit'],
      ['LISTENER_FAILED', 'exit'],
    ]);
  });
});

/** A clock whose next timer of `failOnMs` throws: a fault inside a shutdown step. */
class FaultyClock extends SimulatedClock {
  failOnMs: number | undefined;
  override setTimeout(fn: () => void, ms: number): number {
    if (ms === this.failOnMs) {
      this.failOnMs = undefined;
      throw new Error(`no timer for ${ms} ms`);
    }
    return super.setTimeout(fn, ms);
  }
}

describe('a name held by another live actor', () => {
  it('is a failed start, not a fault: startChild rejects and leaves nothing behind', async () => {
    const registry = new Registry();
    const errors: SupervisorError[] = [];
    const sup = await startSupervisor(
      { children: [] },
      { registry, onError: (e) => errors.push(e) },
    );
    const holder = createActor(worker).start();
    registry.register('x', holder);
    await expect(
      sup.startChild({ id: 'c', name: 'x', start: { logic: worker } }),
    ).rejects.toMatchObject({ code: 'CHILD_START_FAILED', cause: { code: 'ALREADY_STARTED' } });
    expect(sup.whichChildren()).toEqual([]);
    expect(registry.whereis('x')).toBe(holder);
    expect(errors).toEqual([]);
    await sup.shutdown();
  });

  it('at a restart: a failed restart, counted toward the intensity', async () => {
    const registry = new Registry();
    const clock = new SimulatedClock();
    const backoff = { minMs: 10, maxMs: 10, randomFactor: 0, resetAfterMs: 1000 };
    const sup = await startSupervisor(
      { intensity: 1, children: [{ id: 'c', name: 'x', start: { logic: worker }, backoff }] },
      { clock, registry },
    );
    const events: SupervisorEvent[] = [];
    sup.subscribe((e) => events.push(e));
    (sup.child('c') as AnyActorRef).send({ type: 'EXIT' });
    // The name is free while the restart waits out its backoff; someone takes it.
    const squatter = createActor(worker).start();
    registry.register('x', squatter);
    clock.increment(10);
    await settle();
    expect(events.map((e) => e.type)).toEqual([
      'roundtable.child.exited',
      'roundtable.child.restarting',
      'roundtable.child.exited', // the failed restart: { error: AlreadyStartedError }
      'roundtable.supervisor.intensity_reached',
      'roundtable.supervisor.shutdown',
    ]);
    expect(events[2]).toMatchObject({ reason: { error: { code: 'ALREADY_STARTED' } } });
    expect(sup.exitReason()).toBe('shutdown');
    expect(registry.whereis('x')).toBe(squatter);
  });
});

describe('a job that fails', () => {
  it('throwing (sync): the supervisor reports it, crashes, and its parent restarts it', async () => {
    const clock = new SimulatedClock();
    const errors: SupervisorError[] = [];
    let randomThrows = false;
    const random = () => {
      if (!randomThrows) return 0;
      randomThrows = false; // once: the restarted subtree must be able to start
      throw new Error('no entropy');
    };
    const backoff = { minMs: 10, maxMs: 10, randomFactor: 1, resetAfterMs: 1000 };
    const root = await startSupervisor(
      {
        id: 'root',
        children: [
          {
            id: 'inner',
            start: { supervisor: { children: [{ id: 'w', start: { logic: worker }, backoff }] } },
          },
        ],
      },
      { clock, random, onError: (e) => errors.push(e) },
    );
    const inner = root.childSupervisor('inner') as Supervisor;
    randomThrows = true; // nextBackoff calls it inside the exit job
    crash(inner, 'w');
    await settle();
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(SupervisorJobError);
    expect(errors[0]).toMatchObject({ code: 'SUPERVISOR_JOB_FAILED', supervisorId: 'inner' });
    expect(errors[0]?.cause).toMatchObject({ message: 'no entropy' });
    expect(inner.exitReason()).toMatchObject({ error: { message: 'no entropy' } });
    // Calls after the crash are refused, not left pending; shutdown settles.
    await expect(inner.startChild({ id: 'x', start: { logic: worker } })).rejects.toMatchObject({
      code: 'NOPROC',
    });
    await expect(inner.shutdown()).resolves.toBeUndefined();
    // Restarts go on one level up: a new inner supervisor runs a new w.
    const again = root.childSupervisor('inner') as Supervisor;
    expect(again).not.toBe(inner);
    expect(again.whichChildren().map((c) => [c.id, c.status])).toEqual([['w', 'running']]);
    expect(root.whichChildren()[0]?.restartCount).toBe(1);
    await root.shutdown();
  });

  it('rejecting (async, a group restart): the same, and nothing is unhandled', async () => {
    const clock = new FaultyClock();
    const errors: SupervisorError[] = [];
    const root = await startSupervisor(
      {
        id: 'root',
        children: [
          {
            id: 'inner',
            start: {
              supervisor: {
                strategy: 'one_for_all',
                children: [
                  { id: 'a', start: { logic: worker } },
                  { id: 'b', start: { logic: graceful }, shutdown: 5_000 },
                ],
              },
            },
          },
        ],
      },
      { clock, onError: (e) => errors.push(e) },
    );
    const inner = root.childSupervisor('inner') as Supervisor;
    // Stopping b (in the async part of the group restart) arms its 5 s deadline.
    clock.failOnMs = 5_000;
    crash(inner, 'a');
    await settle(30);
    expect(errors.map((e) => e.code)).toEqual(['SUPERVISOR_JOB_FAILED']);
    expect(inner.exitReason()).toMatchObject({ error: { message: 'no timer for 5000 ms' } });
    await expect(inner.shutdown()).resolves.toBeUndefined();
    const again = root.childSupervisor('inner') as Supervisor;
    expect(again.whichChildren().map((c) => [c.id, c.status])).toEqual([
      ['a', 'running'],
      ['b', 'running'],
    ]);
    const stopped = root.shutdown();
    clock.increment(100); // b drains for 100 ms
    await stopped;
  });

  it('an onError that throws is rethrown as uncaught, never into the job', async () => {
    const clock = new SimulatedClock();
    const sup = await startSupervisor(
      { children: [{ id: 'w', start: { logic: worker } }] },
      {
        clock,
        onError: () => {
          throw new Error('reporter down');
        },
      },
    );
    throwOn(sup, 'roundtable.child.exited');
    crash(sup, 'w');
    await settle();
    expect(sup.whichChildren()[0]?.restartCount).toBe(1);
    await sup.shutdown(); // its stop is one more `exited`, one more throw
    await new Promise((r) => setImmediate(r));
    expect(uncaught.map((e) => (e as Error).message)).toEqual(['reporter down', 'reporter down']);
    uncaught.length = 0;
  });
});
