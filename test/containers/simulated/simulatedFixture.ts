/** The simulated cluster as a contract fixture, and helpers to drive its clock. */
import { SimulatedClock } from 'xstate';
import { SimulatedBackend } from '../../../src/containers/simulated/SimulatedBackend.js';
import { SimulatedCluster } from '../../../src/containers/simulated/SimulatedCluster.js';
import type { ContractFixture } from '../contract.js';

/** Lets promise callbacks run; real time does not pass in any meaningful amount. */
export const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Awaits `p` while stepping the simulated clock, with a bound in simulated time. */
export async function settleOn<T>(
  clock: SimulatedClock,
  p: Promise<T>,
  limitMs = 600_000,
): Promise<T> {
  let done = false;
  const tracked = p.finally(() => {
    done = true;
  });
  tracked.catch(() => undefined);
  const until = clock.now() + limitMs;
  await flush();
  while (!done && clock.now() < until) {
    clock.increment(100);
    await flush();
  }
  return p;
}

export function simulatedFixture(): ContractFixture & {
  cluster: SimulatedCluster;
  clock: SimulatedClock;
} {
  const clock = new SimulatedClock();
  clock.set(Date.parse('2026-07-14T10:00:00Z'));
  const cluster = new SimulatedCluster({ clock, nodes: ['node-1', 'node-2', 'node-3'] });
  const namespace = 'sim-a';
  const backend = new SimulatedBackend(cluster, { namespace });
  const unknownImage = 'runner:missing';
  cluster.rejectImage(unknownImage);
  return {
    cluster,
    clock,
    backend,
    image: 'runner:1',
    newerImage: 'runner:2',
    unknownImage,
    restarted: () => new SimulatedBackend(cluster, { namespace }),
    // One cluster, several namespaces, as one engine hosts several deployments.
    inNamespace: (other) => new SimulatedBackend(cluster, { namespace: other }),
    unreachable: () => {
      const dead = new SimulatedCluster({ clock });
      dead.failApi(Number.POSITIVE_INFINITY);
      return new SimulatedBackend(dead);
    },
    settle: (p) => settleOn(clock, p),
    eventually: async (check, deadlineMs) => {
      const until = clock.now() + deadlineMs;
      for (;;) {
        const value = await settleOn(clock, check());
        if (value !== undefined) return value;
        if (clock.now() >= until) throw new Error(`not within ${deadlineMs} simulated ms`);
        clock.increment(250);
        await flush();
      }
    },
    commands: {
      print: (text, code) => ['fail', String(code), text],
      bytes: (n) => ['emit', String(n)],
      long: () => ['agent', '600'],
    },
    replaceContainer: async (ref) => {
      cluster.reschedule(ref.sessionId);
    },
    execCount: (sessionId) => cluster.execLog(sessionId).length,
  };
}
