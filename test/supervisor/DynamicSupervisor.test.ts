import { describe, expect, it } from 'vitest';
import { type AnyActorRef, SimulatedClock } from 'xstate';
import {
  call,
  dynamicSupervisorSpec,
  MaxChildrenError,
  type Supervisor,
  startDynamicSupervisor,
  startSupervisor,
} from '../../src/supervisor/index.js';
import { failsAtStart, settle, worker } from './workers.js';

describe('DynamicSupervisor', () => {
  it('starts children from a template with extra input, up to maxChildren', async () => {
    const clock = new SimulatedClock();
    const sup = await startDynamicSupervisor(
      {
        maxChildren: 2,
        template: {
          id: 'runner',
          restart: 'transient',
          start: { logic: worker, input: { tag: 'x' } },
        },
      },
      { clock },
    );
    const a = await sup.startChild({ id: 's1', input: { tag: '1' } });
    await sup.startChild({});
    await expect(call(a, { type: 'PING' }, { clock })).resolves.toBe('pong1');
    await expect(sup.startChild({ id: 's3' })).rejects.toBeInstanceOf(MaxChildrenError);
    await expect(sup.startChild({ id: 's1' })).rejects.toMatchObject({ code: 'MAX_CHILDREN' });
    await sup.terminateChild('s1');
    expect(sup.whichChildren().map((c) => c.id)).toEqual(['runner-2']);
    await expect(sup.startChild({ id: 'runner-2' })).rejects.toMatchObject({
      code: 'ALREADY_STARTED',
    });
    await expect(sup.terminateChild('nope')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(
      sup
        .startChild({ id: 'bad', input: {} })
        .then(() => sup.startChild({ id: 'c', start: { logic: failsAtStart } } as never)),
    ).rejects.toMatchObject({ code: 'MAX_CHILDREN' });
    await sup.shutdown();
    await expect(sup.startChild({})).rejects.toMatchObject({ code: 'NOPROC' });
  });

  it('a failed startChild names the child; a transient child ending normally is not restarted', async () => {
    const sup = await startDynamicSupervisor();
    await expect(
      sup.startChild({ id: 'bad', start: { logic: failsAtStart } }),
    ).rejects.toMatchObject({
      code: 'CHILD_START_FAILED',
      childId: 'bad',
    });
    const w = (await sup.startChild({
      id: 'w',
      restart: 'transient',
      start: { logic: worker },
    })) as AnyActorRef;
    w.send({ type: 'EXIT' });
    await settle();
    expect(sup.countChildren()).toMatchObject({ specs: 1, active: 0 });
    await sup.shutdown();
  });

  it('nests under a static supervisor', async () => {
    const root = await startSupervisor({
      children: [
        { id: 'runners', start: { supervisor: dynamicSupervisorSpec({ maxChildren: 5 }) } },
      ],
    });
    const runners = root.childSupervisor('runners') as Supervisor;
    await runners.startChild({ id: 'r', start: { logic: worker } });
    expect(runners.countChildren().active).toBe(1);
    await root.shutdown();
    expect(runners.exitReason()).toBe('shutdown');
  });
});
