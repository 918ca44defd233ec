import { describe, expect, it } from 'vitest';
import { type AnyActorRef, type InspectionEvent, SimulatedClock } from 'xstate';
import {
  type ChildSpec,
  ChildStartError,
  type ExitReason,
  type RestartType,
  type Strategy,
  type Supervisor,
  type SupervisorEvent,
  startSupervisor,
} from '../../src/supervisor/index.js';
import { expectNoUncaught } from './noUncaught.js';
import { failsAtStart, graceful, rejects, settle, stubborn, worker } from './workers.js';

// Every test here also proves the Node process saw no uncaught error.
expectNoUncaught();

const send = (sup: Supervisor, id: string, event: { type: string; [k: string]: unknown }) =>
  (sup.child(id) as AnyActorRef).send(event);

type ExitKind = 'normal' | 'shutdown' | 'shutdown_detail' | 'error' | 'killed';
function makeExit(sup: Supervisor, id: string, kind: ExitKind): void {
  if (kind === 'error') send(sup, id, { type: 'CRASH' });
  else if (kind === 'killed') (sup.child(id) as AnyActorRef).stop();
  else {
    const exit: ExitReason =
      kind === 'normal' ? 'normal' : kind === 'shutdown' ? 'shutdown' : { shutdown: 'drained' };
    send(sup, id, { type: 'EXIT', exit });
  }
}

// OTP's documented rules (supervisor(3)), written out rather than computed:
// permanent always restarts, temporary never, transient only on abnormal exits.
const restartsPerOtp: Record<RestartType, Record<ExitKind, boolean>> = {
  permanent: { normal: true, shutdown: true, shutdown_detail: true, error: true, killed: true },
  transient: { normal: false, shutdown: false, shutdown_detail: false, error: true, killed: true },
  temporary: {
    normal: false,
    shutdown: false,
    shutdown_detail: false,
    error: false,
    killed: false,
  },
};
const restartedPerStrategy: Record<Strategy, string[]> = {
  one_for_one: ['b'],
  one_for_all: ['a', 'b', 'c'],
  rest_for_one: ['b', 'c'],
};

describe('strategy x restart type x exit reason, per OTP', () => {
  const strategies: Strategy[] = ['one_for_one', 'one_for_all', 'rest_for_one'];
  const types: RestartType[] = ['permanent', 'transient', 'temporary'];
  const kinds: ExitKind[] = ['normal', 'shutdown', 'shutdown_detail', 'error', 'killed'];
  const rows = strategies.flatMap((s) =>
    types.flatMap((t) => kinds.map((k) => [s, t, k] as const)),
  );
  it.each(rows)('%s, b %s, exit %s', async (strategy, restart, kind) => {
    const clock = new SimulatedClock();
    const sup = await startSupervisor(
      {
        strategy,
        children: [
          { id: 'a', start: { logic: worker } },
          { id: 'b', start: { logic: worker }, restart },
          { id: 'c', start: { logic: worker } },
        ],
      },
      { clock },
    );
    makeExit(sup, 'b', kind);
    await settle();
    const rows = sup.whichChildren();
    if (restartsPerOtp[restart][kind]) {
      const restarted = restartedPerStrategy[strategy];
      expect(rows.map((r) => [r.id, r.status, r.restartCount])).toEqual(
        ['a', 'b', 'c'].map((id) => [id, 'running', restarted.includes(id) ? 1 : 0]),
      );
    } else if (restart === 'temporary') {
      expect(rows.map((r) => r.id)).toEqual(['a', 'c']);
    } else {
      expect(rows.map((r) => [r.id, r.status])).toEqual([
        ['a', 'running'],
        ['b', 'stopped'],
        ['c', 'running'],
      ]);
    }
    await sup.shutdown();
  });
});

describe('restart intensity and escalation', () => {
  it('gives up after more than `intensity` restarts in the period, stopping children in reverse', async () => {
    const clock = new SimulatedClock();
    const sup = await startSupervisor(
      {
        intensity: 1,
        periodMs: 5000,
        children: [
          { id: 'a', start: { logic: worker } },
          { id: 'b', start: { logic: worker } },
        ],
      },
      { clock },
    );
    const events: SupervisorEvent[] = [];
    sup.subscribe((e) => events.push(e));
    send(sup, 'a', { type: 'CRASH' });
    await settle();
    clock.increment(4999);
    send(sup, 'a', { type: 'CRASH' });
    await settle();
    expect(sup.exitReason()).toBe('shutdown');
    expect(events.map((e) => e.type + ('childId' in e ? `:${e.childId}` : ''))).toEqual([
      'roundtable.child.exited:a',
      'roundtable.child.restarting:a',
      'roundtable.child.started:a',
      'roundtable.child.exited:a',
      'roundtable.supervisor.intensity_reached',
      'roundtable.child.exited:b',
      'roundtable.supervisor.shutdown',
    ]);
  });

  it('forgets restarts older than the period', async () => {
    const clock = new SimulatedClock();
    const sup = await startSupervisor(
      { intensity: 1, periodMs: 5000, children: [{ id: 'a', start: { logic: worker } }] },
      { clock },
    );
    for (let i = 0; i < 5; i++) {
      send(sup, 'a', { type: 'CRASH' });
      await settle();
      clock.increment(5001);
    }
    expect(sup.exitReason()).toBeUndefined();
    expect(sup.whichChildren()[0]?.restartCount).toBe(5);
    await sup.shutdown();
  });

  it("a nested supervisor's give-up is a `shutdown` exit its parent restarts (escalation)", async () => {
    const clock = new SimulatedClock();
    const root = await startSupervisor(
      {
        id: 'root',
        children: [
          {
            id: 'inner',
            start: {
              supervisor: { intensity: 0, children: [{ id: 'w', start: { logic: worker } }] },
            },
          },
        ],
      },
      { clock },
    );
    const events: SupervisorEvent[] = [];
    root.subscribe((e) => events.push(e));
    const inner = root.childSupervisor('inner') as Supervisor;
    send(inner, 'w', { type: 'CRASH' });
    await settle();
    expect(inner.exitReason()).toBe('shutdown');
    expect(events[0]).toMatchObject({
      type: 'roundtable.child.exited',
      childId: 'inner',
      reason: 'shutdown',
    });
    const again = root.childSupervisor('inner') as Supervisor;
    expect(again).not.toBe(inner);
    expect(again.whichChildren()[0]?.status).toBe('running');
    expect(root.whichChildren()[0]?.restartCount).toBe(1);
    await root.shutdown();
    expect(again.exitReason()).toBe('shutdown');
  });
});

describe('ordered start and stop', () => {
  it('a child that fails to start stops the started ones in reverse and names itself', async () => {
    const events: string[] = [];
    const p = startSupervisor({
      children: [
        { id: 'a', start: { logic: worker } },
        { id: 'b', start: { logic: worker } },
        { id: 'bad', start: { logic: failsAtStart } },
        { id: 'never', start: { logic: worker } },
      ],
    });
    await expect(p).rejects.toMatchObject({ code: 'CHILD_START_FAILED', childId: 'bad' });
    await p.catch((e: ChildStartError) => {
      expect(e).toBeInstanceOf(ChildStartError);
      expect((e.cause as Error).message).toBe('cannot start');
      events.push(e.message);
    });
    expect(events).toHaveLength(1);
  });

  it('stops in reverse order; a child that ignores its stop is killed at its deadline', async () => {
    const clock = new SimulatedClock();
    const sup = await startSupervisor(
      {
        children: [
          { id: 'plain', start: { logic: worker } },
          { id: 'polite', start: { logic: graceful }, shutdown: 1000 },
          { id: 'stubborn', start: { logic: stubborn }, shutdown: 500 },
        ],
      },
      { clock },
    );
    const exits: [string, ExitReason][] = [];
    sup.subscribe((e) => {
      if (e.type === 'roundtable.child.exited') exits.push([e.childId, e.reason]);
    });
    let done = false;
    const stopping = sup.shutdown().then(() => {
      done = true;
    });
    await settle();
    expect(exits).toEqual([]);
    clock.increment(499);
    await settle();
    expect(exits).toEqual([]);
    clock.increment(1);
    await settle();
    expect(exits).toEqual([['stubborn', 'killed']]);
    expect(done).toBe(false);
    clock.increment(100);
    await stopping;
    expect(exits).toEqual([
      ['stubborn', 'killed'],
      ['polite', 'shutdown'],
      ['plain', 'shutdown'],
    ]);
    expect(sup.exitReason()).toBe('shutdown');
  });

  it('brutal_kill stops at once with reason killed', async () => {
    const sup = await startSupervisor({
      children: [{ id: 's', start: { logic: stubborn }, shutdown: 'brutal_kill' }],
    });
    const exits: ExitReason[] = [];
    sup.subscribe((e) => e.type === 'roundtable.child.exited' && exits.push(e.reason));
    await sup.shutdown();
    expect(exits).toEqual(['killed']);
  });
});

describe('every failure is an exit, never a crash', () => {
  it('throws in actions, rejected promises and failed restarts end as exits with the error', async () => {
    const clock = new SimulatedClock();
    const sup = await startSupervisor(
      {
        intensity: 100,
        children: [
          { id: 'w', start: { logic: worker } },
          { id: 'p', start: { logic: rejects }, restart: 'transient' },
        ],
      },
      { clock },
    );
    const reasons: ExitReason[] = [];
    sup.subscribe(
      (e) => e.type === 'roundtable.child.exited' && e.childId === 'w' && reasons.push(e.reason),
    );
    send(sup, 'w', { type: 'CRASH' });
    await settle(30);
    expect(reasons).toHaveLength(1);
    expect(((reasons[0] as { error: Error }).error as Error).message).toBe('boom');
    // the rejecting promise keeps restarting until the intensity stops it: no crash either way
    expect(sup.whichChildren().find((c) => c.id === 'p')!.restartCount).toBeGreaterThan(0);
    await sup.kill();
  });
});

describe('significant children and autoShutdown', () => {
  it('any_significant: a significant child ending normally shuts the supervisor down', async () => {
    const sup = await startSupervisor({
      autoShutdown: 'any_significant',
      children: [
        { id: 'a', start: { logic: worker } },
        { id: 'job', start: { logic: worker }, restart: 'transient', significant: true },
      ],
    });
    send(sup, 'job', { type: 'EXIT' });
    await settle();
    expect(sup.exitReason()).toBe('shutdown');
  });

  it('all_significant waits for the last significant child', async () => {
    const sup = await startSupervisor({
      autoShutdown: 'all_significant',
      children: [
        { id: 'j1', start: { logic: worker }, restart: 'temporary', significant: true },
        { id: 'j2', start: { logic: worker }, restart: 'transient', significant: true },
      ],
    });
    send(sup, 'j1', { type: 'EXIT' });
    await settle();
    expect(sup.exitReason()).toBeUndefined();
    send(sup, 'j2', { type: 'EXIT' });
    await settle();
    expect(sup.exitReason()).toBe('shutdown');
  });

  it('rejects a significant child under autoShutdown never', async () => {
    await expect(
      startSupervisor({
        children: [{ id: 'j', start: { logic: worker }, restart: 'transient', significant: true }],
      }),
    ).rejects.toMatchObject({ code: 'INVALID_CHILD_SPEC', field: 'significant' });
  });
});

describe('backoff', () => {
  it('delays restarts exponentially on the clock and resets after a stable period', async () => {
    const clock = new SimulatedClock();
    const child: ChildSpec = {
      id: 'a',
      start: { logic: worker },
      backoff: { minMs: 100, maxMs: 1000, randomFactor: 0.5, resetAfterMs: 10_000 },
    };
    const sup = await startSupervisor(
      { intensity: 100, periodMs: 1, children: [child] },
      { clock, random: () => 0 },
    );
    const delays: number[] = [];
    sup.subscribe((e) => e.type === 'roundtable.child.restarting' && delays.push(e.delayMs));
    for (const wait of [100, 200, 400]) {
      send(sup, 'a', { type: 'CRASH' });
      await settle();
      expect(sup.whichChildren()[0]?.status).toBe('restarting');
      clock.increment(wait - 1);
      await settle();
      expect(sup.child('a')).toBeUndefined();
      clock.increment(1);
      await settle();
      expect(sup.whichChildren()[0]?.status).toBe('running');
    }
    clock.increment(10_000);
    send(sup, 'a', { type: 'CRASH' });
    await settle();
    expect(delays).toEqual([100, 200, 400, 100]);
    await sup.shutdown();
  });

  it('gives up on the child after maxRestarts', async () => {
    const clock = new SimulatedClock();
    const sup = await startSupervisor(
      {
        intensity: 100,
        children: [
          {
            id: 'a',
            start: { logic: worker },
            backoff: { minMs: 10, maxMs: 10, randomFactor: 0, resetAfterMs: 1e9, maxRestarts: 1 },
          },
        ],
      },
      { clock },
    );
    send(sup, 'a', { type: 'CRASH' });
    await settle();
    clock.increment(10);
    await settle();
    send(sup, 'a', { type: 'CRASH' });
    await settle();
    expect(sup.whichChildren()[0]).toMatchObject({ status: 'stopped', restartCount: 1 });
    await sup.shutdown();
  });
});

describe('observability', () => {
  it('one inspect observer sees the children and the supervisor events as @xstate.event frames', async () => {
    const frames: InspectionEvent[] = [];
    const sup = await startSupervisor(
      { id: 'root', children: [{ id: 'a', start: { logic: worker } }] },
      { inspect: (e) => frames.push(e) },
    );
    send(sup, 'a', { type: 'CRASH' });
    await settle();
    await sup.shutdown();
    const supEvents = frames
      .filter((f) => f.type === '@xstate.event' && f.event.type.startsWith('roundtable.'))
      .map((f) => (f as { event: { type: string } }).event.type);
    expect(supEvents).toEqual([
      'roundtable.child.started',
      'roundtable.child.exited',
      'roundtable.child.restarting',
      'roundtable.child.started',
      'roundtable.child.exited',
      'roundtable.supervisor.shutdown',
    ]);
    const actors = frames
      .filter((f) => f.type === '@xstate.actor')
      .map((f) => (f.actorRef as unknown as { id: string }).id);
    expect(actors).toEqual(['root', 'a', 'a']);
    const started = frames.find(
      (f) => f.type === '@xstate.event' && f.event.type === 'roundtable.child.started',
    ) as unknown as { event: { sessionId: string } };
    expect(
      frames.some(
        (f) => f.type === '@xstate.actor' && f.actorRef.sessionId === started.event.sessionId,
      ),
    ).toBe(true);
  });

  it('countChildren counts specs, running children, supervisors and workers', async () => {
    const sup = await startSupervisor({
      children: [
        { id: 'a', start: { logic: worker } },
        { id: 't', start: { logic: worker }, restart: 'transient' },
        { id: 's', start: { supervisor: { children: [] } } },
      ],
    });
    send(sup, 't', { type: 'EXIT' });
    await settle();
    expect(sup.countChildren()).toEqual({ specs: 3, active: 2, supervisors: 1, workers: 2 });
    await sup.shutdown();
  });
});
