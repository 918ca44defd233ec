import { describe, expect, it } from 'vitest';
import { type AnyActorRef, createActor, SimulatedClock } from 'xstate';
import { call, Registry, startSupervisor } from '../../src/supervisor/index.js';
import { settle, worker } from './workers.js';

describe('Registry', () => {
  it('a name follows a supervised child across restarts', async () => {
    const registry = new Registry();
    const clock = new SimulatedClock();
    const sup = await startSupervisor(
      { children: [{ id: 'w', name: 'pinger', start: { logic: worker, input: { tag: '!' } } }] },
      { registry, clock },
    );
    const first = registry.whereis('pinger');
    registry.send('pinger', { type: 'CRASH' });
    await settle();
    const second = registry.whereis('pinger');
    expect(second).toBeDefined();
    expect(second).not.toBe(first);
    await expect(call(second as AnyActorRef, { type: 'PING' }, { clock })).resolves.toBe('pong!');
    await sup.shutdown();
    expect(registry.whereis('pinger')).toBeUndefined();
    expect(() => registry.send('pinger', { type: 'PING' })).toThrow(
      expect.objectContaining({ code: 'NOPROC' }),
    );
  });

  it('frees a name when its holder exits for good, and refuses a live holder', async () => {
    const registry = new Registry();
    const a = createActor(worker).start();
    registry.register('x', a);
    expect(() => registry.register('x', createActor(worker).start())).toThrow(
      expect.objectContaining({ code: 'ALREADY_STARTED' }),
    );
    a.send({ type: 'EXIT' });
    expect(registry.whereis('x')).toBeUndefined();
    expect(registry.registered()).toEqual([]);
    const b = createActor(worker).start();
    registry.register('x', b);
    expect(registry.whereis('x')).toBe(b);
  });
});
