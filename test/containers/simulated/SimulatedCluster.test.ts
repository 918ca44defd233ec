import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { SimulatedClock } from 'xstate';
import type { RunExit } from '../../../src/containers/ContainerBackend.js';
import { ContainerError } from '../../../src/containers/ContainerError.js';
import { SimulatedBackend } from '../../../src/containers/simulated/SimulatedBackend.js';
import { SimulatedCluster } from '../../../src/containers/simulated/SimulatedCluster.js';
import { decide } from '../../../src/machines/adoptPolicy.js';
import { flush, settleOn } from './simulatedFixture.js';

function setup() {
  const clock = new SimulatedClock();
  clock.set(Date.parse('2026-07-14T10:00:00Z'));
  const cluster = new SimulatedCluster({ clock, nodes: ['n1', 'n2', 'n3'] });
  const backend = new SimulatedBackend(cluster, { callTimeoutMs: 5000 });
  const settle = <T>(p: Promise<T>) => settleOn(clock, p);
  return { clock, cluster, backend, settle };
}

describe('SimulatedCluster faults', () => {
  it('a hung API makes observe time out to unknown, then recovers', async () => {
    const { clock, cluster, backend, settle } = setup();
    const { handle } = await settle(
      backend.start({ sessionId: 's1', image: 'r:1', command: ['agent', '60'] }),
    );
    cluster.hangApi(30_000);
    const seen = await settle(backend.observe({ handle, sessionId: 's1' }));
    expect(seen.presence).toBe('unknown');
    expect(seen.error?.code).toBe('timeout');
    clock.increment(30_000);
    expect((await settle(backend.observe({ handle, sessionId: 's1' }))).presence).toBe('present');
  });

  it('a failing API is unknown until the outage ends', async () => {
    const { clock, cluster, backend, settle } = setup();
    const { handle } = await settle(
      backend.start({ sessionId: 's1', image: 'r:1', command: ['echo'] }),
    );
    cluster.failApi(clock.now() + 10_000);
    const seen = await settle(backend.observe({ handle, sessionId: 's1' }));
    expect(seen).toMatchObject({ presence: 'unknown', error: { code: 'unavailable' } });
    await expect(
      settle(backend.start({ sessionId: 's2', image: 'r:1', command: ['echo'] })),
    ).rejects.toMatchObject({
      code: 'unavailable',
    });
    clock.increment(10_000);
    expect((await settle(backend.observe({ handle, sessionId: 's1' }))).presence).toBe('present');
  });

  it('killing a node brings its containers back elsewhere, later, with an empty /tmp', async () => {
    const { clock, cluster, backend, settle } = setup();
    const { handle, startedAt } = await settle(
      backend.start({ sessionId: 's1', image: 'r:1', command: ['agent', '60'] }),
    );
    const before = cluster.serviceOf('s1')?.container;
    expect(before?.tmp.size).toBeGreaterThan(0);
    clock.increment(5000);
    cluster.killNode(before?.node as string);
    clock.increment(1000);
    await flush();
    const after = cluster.serviceOf('s1')?.container;
    expect(after?.node).not.toBe(before?.node);
    expect(after?.tmp.size).toBe(0);
    const seen = await settle(backend.observe({ handle, sessionId: 's1' }));
    expect(decide(seen.containerStartedAt, startedAt, 0, 900_000)).toEqual({
      kind: 'give_up',
      reason: 'container_replaced',
    });
  });

  it('rolling the image replaces every service not already on it', async () => {
    const { clock, cluster, backend, settle } = setup();
    await settle(backend.start({ sessionId: 's1', image: 'r:1', command: ['agent'] }));
    await settle(backend.start({ sessionId: 's2', image: 'r:2', command: ['agent'] }));
    expect(cluster.rollImage('r:2')).toEqual(['rt-s1']);
    clock.increment(1000);
    expect(cluster.serviceOf('s1')?.container?.image).toBe('r:2');
  });

  it('refuses anything but the wrapper, and a duplicate service', async () => {
    const { cluster, backend, settle } = setup();
    await settle(backend.start({ sessionId: 's1', image: 'r:1', command: ['agent'] }));
    await expect(
      settle(cluster.api.exec('rt-s1', ['rm', '-rf', '/'], {}, () => undefined)),
    ).rejects.toMatchObject({
      code: 'invalid_argument',
    });
    await expect(
      settle(backend.start({ sessionId: 's1', image: 'r:1', command: ['agent'] })),
    ).rejects.toMatchObject({ code: 'conflict' });
  });
});

type Fault =
  | { kind: 'advance'; ms: number }
  | { kind: 'reschedule' }
  | { kind: 'killNode'; node: 'n1' | 'n2' | 'n3' }
  | { kind: 'rollImage' }
  | { kind: 'failApi'; ms: number }
  | { kind: 'hangApi'; ms: number };

const fault: fc.Arbitrary<Fault> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('advance' as const),
      ms: fc.integer({ min: 100, max: 30_000 }),
    }),
  },
  fc.record({ kind: fc.constant('reschedule' as const) }),
  fc.record({
    kind: fc.constant('killNode' as const),
    node: fc.constantFrom('n1' as const, 'n2' as const, 'n3' as const),
  }),
  fc.record({ kind: fc.constant('rollImage' as const) }),
  fc.record({ kind: fc.constant('failApi' as const), ms: fc.integer({ min: 100, max: 20_000 }) }),
  fc.record({ kind: fc.constant('hangApi' as const), ms: fc.integer({ min: 100, max: 20_000 }) }),
);

describe('SimulatedCluster faults on names it does not know', () => {
  it('reschedule of an id no run was started for throws, naming what to pass', () => {
    // It did nothing, silently: a test that passed a task's id asserted on a move that never happened.
    const { cluster } = setup();
    expect(() => cluster.reschedule('tsk_0123')).toThrow(
      expect.objectContaining({
        name: 'ContainerError',
        code: 'not_found',
        message: expect.stringContaining("pass a started session's id"),
      }),
    );
  });

  it('reschedule says whether it moved a container: false once the run ended', async () => {
    const { cluster, backend, settle } = setup();
    const { handle } = await settle(
      backend.start({ sessionId: 's1', image: 'r:1', command: ['agent', '60'] }),
    );
    expect(cluster.reschedule('s1')).toBe(true);
    await settle(backend.remove({ handle, sessionId: 's1' }));
    expect(cluster.reschedule('s1')).toBe(false);
  });

  it('a start that failed still counts as started', async () => {
    const { clock, cluster, backend, settle } = setup();
    cluster.failApi(clock.now() + 10_000);
    await expect(
      settle(backend.start({ sessionId: 's1', image: 'r:1', command: ['echo'] })),
    ).rejects.toMatchObject({ code: 'unavailable' });
    expect(cluster.reschedule('s1')).toBe(false);
  });

  it('killNode and reviveNode of an unknown node name the nodes there are', () => {
    const { cluster } = setup();
    for (const call of [() => cluster.killNode('node-1'), () => cluster.reviveNode('node-1')])
      expect(call).toThrow('no node "node-1"; the cluster\'s nodes are n1, n2, n3');
  });
});

describe('SimulatedCluster engine refusals and health', () => {
  it('rejectImage: start fails rejected with Docker’s reason, leaves nothing, until acceptImage', async () => {
    const { cluster, backend, settle } = setup();
    cluster.rejectImage('r:gone');
    await expect(
      settle(backend.start({ sessionId: 's1', image: 'r:gone', command: ['echo'] })),
    ).rejects.toMatchObject({ code: 'rejected', message: 'No such image: r:gone' });
    expect(cluster.serviceOf('s1')).toBeUndefined();
    expect(cluster.execLog('s1')).toEqual([]);
    cluster.acceptImage('r:gone');
    const { handle } = await settle(
      backend.start({ sessionId: 's1', image: 'r:gone', command: ['echo'] }),
    );
    expect(handle).toBe('rt-s1');
  });

  it('rejectImage takes any reason, as a bad spec would give', async () => {
    const { cluster, backend, settle } = setup();
    cluster.rejectImage('r:bad', 'invalid mount config for type "bind"');
    await expect(
      settle(backend.start({ sessionId: 's1', image: 'r:bad', command: ['echo'] })),
    ).rejects.toMatchObject({ code: 'rejected', message: 'invalid mount config for type "bind"' });
  });

  it('a service rolled onto a rejected image gets no container: present, none running', async () => {
    const { clock, cluster, backend, settle } = setup();
    const { handle } = await settle(
      backend.start({ sessionId: 's1', image: 'r:1', command: ['agent', '60'] }),
    );
    cluster.rejectImage('r:2');
    cluster.rollImage('r:2');
    clock.increment(5000);
    expect(await settle(backend.observe({ handle, sessionId: 's1' }))).toEqual({
      presence: 'present',
      containerStartedAt: null,
      marker: null,
    });
    expect(cluster.serviceOf('s1')?.taskError).toBe('No such image: r:2');
  });

  it('ping is ok, unavailable during failApi, timeout during hangApi, ok again after', async () => {
    const { clock, cluster, backend, settle } = setup();
    expect(await settle(backend.ping())).toEqual({ ok: true });
    cluster.failApi(clock.now() + 10_000);
    expect(await settle(backend.ping())).toEqual({
      ok: false,
      code: 'unavailable',
      message: 'simulated API outage',
    });
    clock.increment(10_000);
    expect(await settle(backend.ping())).toEqual({ ok: true });
    cluster.hangApi(60_000);
    expect(await settle(backend.ping())).toMatchObject({ ok: false, code: 'timeout' });
  });

  it('a start with no node up fails unavailable and leaves no service', async () => {
    const { cluster, backend, settle } = setup();
    cluster.killNode('n1');
    cluster.killNode('n2');
    cluster.killNode('n3');
    await expect(
      settle(backend.start({ sessionId: 's1', image: 'r:1', command: ['echo'] })),
    ).rejects.toMatchObject({ code: 'unavailable' });
    expect(await settle(backend.listHandles())).toEqual([]);
  });
});

describe('SimulatedCluster with every node down', () => {
  it('a lost container waits, pending, for a node instead of throwing into the clock, then comes back', async () => {
    const { clock, cluster, backend, settle } = setup();
    await settle(backend.start({ sessionId: 's1', image: 'r:1', command: ['agent', '60'] }));
    for (const n of ['n1', 'n2', 'n3']) cluster.killNode(n);
    // The restart timer fires with no node up: before, it threw `no node is up`.
    expect(() => clock.increment(5_000)).not.toThrow();
    expect(cluster.serviceOf('s1')?.container).toBeNull();
    cluster.reviveNode('n2');
    clock.increment(1_000);
    expect(cluster.serviceOf('s1')?.container).toMatchObject({
      node: 'n2',
      startedAt: clock.now(),
    });
    expect(() => cluster.reviveNode('n9')).toThrow(ContainerError);
  });
});

describe('SimulatedCluster under random faults', () => {
  test.prop([fc.array(fault, { maxLength: 12 })], { numRuns: 150 })(
    'runs every command once; the marker survives exactly when the container did',
    async (faults) => {
      const { clock, cluster, backend, settle } = setup();
      const sessionId = 'prop';
      const { handle, startedAt } = await settle(
        backend.start({ sessionId, image: 'r:0', command: ['agent', '60', '3'] }),
      );
      let owner: { ok: true; exit: RunExit } | { ok: false; error: unknown } | null = null;
      backend.attach({ handle, sessionId }).then(
        (exit) => {
          owner = { ok: true, exit };
        },
        (error: unknown) => {
          owner = { ok: false, error };
        },
      );
      const endsAt = startedAt.getTime() + 60_000;
      // Any replacement loses the marker (it lived in the old /tmp); only one
      // before the run ended also loses the owner's exec.
      let replaced = false;
      let replacedBeforeEnd = false;
      let image = 0;
      for (const f of faults) {
        const beforeEnd = clock.now() < endsAt;
        if (f.kind === 'advance') clock.increment(f.ms);
        if (f.kind === 'reschedule') {
          cluster.reschedule(sessionId);
          replaced = true;
          replacedBeforeEnd ||= beforeEnd;
        }
        if (f.kind === 'killNode') {
          if (cluster.serviceOf(sessionId)?.container?.node === f.node) {
            replaced = true;
            replacedBeforeEnd ||= beforeEnd;
          }
          cluster.killNode(f.node);
          cluster.reviveNode(f.node);
        }
        if (f.kind === 'rollImage') {
          image += 1;
          cluster.rollImage(`r:${image}`);
          replaced = true;
          replacedBeforeEnd ||= beforeEnd;
        }
        if (f.kind === 'failApi') cluster.failApi(clock.now() + f.ms);
        if (f.kind === 'hangApi') cluster.hangApi(f.ms);
        await flush();
      }
      // Let the run end, the outages pass and any replacement come up.
      clock.increment(Math.max(0, endsAt - clock.now()) + 25_000);
      await flush();

      const after = new SimulatedBackend(cluster, { callTimeoutMs: 5000 });
      const seen = await settle(after.observe({ handle, sessionId }));
      expect(cluster.execLog(sessionId)).toHaveLength(1);
      expect(seen.presence).toBe('present');
      if (replaced) {
        expect(seen.marker).toBeNull();
        expect(decide(seen.containerStartedAt, startedAt, 0, 900_000)).toEqual({
          kind: 'give_up',
          reason: 'container_replaced',
        });
      } else {
        expect(seen.marker).toEqual({ exitCode: 3 });
        expect(decide(seen.containerStartedAt, startedAt, 0, 900_000)).toEqual({ kind: 'poll' });
        const output = await settle(after.readOutput({ handle, sessionId }));
        expect(output.text).toMatch(/\[agent\] gave up\n$/);
      }
      if (replacedBeforeEnd) {
        expect(owner).toMatchObject({ ok: false, error: { code: 'exec_lost' } });
        expect((owner as { error: unknown } | null)?.error).toBeInstanceOf(ContainerError);
      } else {
        expect(owner).toEqual({ ok: true, exit: { exitCode: 3 } });
      }
    },
  );
});
