/**
 * `child(id)`, `childSupervisor(id)` and `startChild` are typed by what the
 * spec starts, so no caller probes a ref (`'send' in ref`) or casts it.
 */
import { describe, expect, expectTypeOf, it } from 'vitest';
import type { ActorRefFrom, AnyActorRef } from 'xstate';
import {
  ChildTypeError,
  dynamicSupervisorSpec,
  type Supervisor,
  startDynamicSupervisor,
  startSupervisor,
} from '../../src/supervisor/index.js';
import { worker } from './workers.js';

describe('typed children', () => {
  it('child() is a worker, childSupervisor() a nested supervisor, and the wrong one is a ChildTypeError', async () => {
    const root = await startSupervisor({
      children: [
        { id: 'w', start: { logic: worker } },
        { id: 'sub', start: { supervisor: dynamicSupervisorSpec() } },
      ],
    });
    const w = root.child('w');
    expectTypeOf(w).toEqualTypeOf<AnyActorRef | undefined>();
    expect(w?.getSnapshot().status).toBe('active');
    const sub = root.childSupervisor('sub');
    expectTypeOf(sub).toEqualTypeOf<Supervisor | undefined>();
    expect(sub?.countChildren().specs).toBe(0);
    expect(() => root.child('sub')).toThrow(ChildTypeError);
    expect(() => root.childSupervisor('w')).toThrow(
      expect.objectContaining({ code: 'WRONG_CHILD_TYPE', childId: 'w', type: 'worker' }),
    );
    expect(root.child('nobody')).toBeUndefined();
    expect(root.childSupervisor('nobody')).toBeUndefined();

    const rows = root.whichChildren();
    const [first, second] = rows;
    if (first?.type !== 'worker' || second?.type !== 'supervisor') throw new Error('order');
    expectTypeOf(first.ref).toEqualTypeOf<AnyActorRef | undefined>();
    expectTypeOf(second.ref).toEqualTypeOf<Supervisor | undefined>();
    expect(first.ref).toBe(w);
    expect(second.ref).toBe(sub);
    await root.shutdown();
    expect(root.child('w')).toBeUndefined();
  });

  it('startChild resolves with the type its spec starts', async () => {
    const root = await startSupervisor({ children: [] });
    const ref = await root.startChild({ id: 'w', start: { logic: worker } });
    expectTypeOf(ref).toEqualTypeOf<ActorRefFrom<typeof worker>>();
    ref.send({ type: 'EXIT' }); // a WorkerEvent: the ref knows its logic's events
    const sup = await root.startChild({ id: 's', start: { supervisor: { children: [] } } });
    expectTypeOf(sup).toEqualTypeOf<Supervisor>();
    expect(sup.exitReason()).toBeUndefined();
    expect(root.childSupervisor('s')).toBe(sup);
    await root.shutdown();
  });

  it('a template start is a worker; a supervisor template starts with startChildSupervisor', async () => {
    const workers = await startDynamicSupervisor({
      template: { id: 'w', restart: 'temporary', start: { logic: worker } },
    });
    expectTypeOf(await workers.startChild({ id: 'a' })).toEqualTypeOf<AnyActorRef>();
    await expect(workers.startChildSupervisor({ id: 'b' })).rejects.toBeInstanceOf(ChildTypeError);
    expect(workers.whichChildren().map((c) => c.id)).toEqual(['a']);

    const groups = await startDynamicSupervisor({
      template: { id: 'g', restart: 'temporary', start: { supervisor: { children: [] } } },
    });
    await expect(groups.startChild({ id: 'x' })).rejects.toBeInstanceOf(ChildTypeError);
    const g = await groups.startChildSupervisor({ id: 'y' });
    expect(groups.childSupervisor('y')).toBe(g);
    expect(groups.whichChildren().map((c) => c.id)).toEqual(['y']);
    await workers.shutdown();
    await groups.shutdown();
  });
});
