/**
 * The RunnerPool on its own: holds, releases and holders' deaths, checked
 * against a model (fc.commands): the runtime is told of a death exactly
 * when the holder that died still held its slot, never for one released or
 * replaced, and the pool's context is data (a JSON round trip keeps it).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createActor } from 'xstate';
import { heldSessions, runnerPoolMachine } from '../../src/actors/runnerPool.js';
import type { ExitReason } from '../../src/supervisor/exitReason.js';
import type { ExitSource } from '../../src/supervisor/watchExit.js';

/** A holder that exits when told to. */
class Holder implements ExitSource {
  private reason: ExitReason | undefined;
  private readonly listeners = new Set<(reason: ExitReason) => void>();
  constructor(readonly id: string) {}
  exitReason() {
    return this.reason;
  }
  onExit(listener: (reason: ExitReason) => void) {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  exit(reason: ExitReason) {
    if (this.reason !== undefined) return;
    this.reason = reason;
    for (const l of [...this.listeners]) l(reason);
  }
}

/** DOWN is delivered on a microtask (monitor.ts), then the pool's own event. */
const flush = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

function startPool() {
  const downs: Array<[string, ExitReason]> = [];
  const pool = createActor(runnerPoolMachine, {
    input: { onDown: (sessionId, reason) => downs.push([sessionId, reason]) },
  }).start();
  return { pool, downs };
}

describe('RunnerPool', () => {
  it('tells a holder death once, for the slot it held; a released or replaced hold is never told', async () => {
    const { pool, downs } = startPool();
    const [a, b, c] = [new Holder('a'), new Holder('b'), new Holder('c')];
    pool.send({ type: 'roundtable.pool.hold', sessionId: 's1', holder: a });
    pool.send({ type: 'roundtable.pool.hold', sessionId: 's2', holder: b });
    pool.send({ type: 'roundtable.pool.release', sessionId: 's2' });
    // s1 re-held by a restarted runner: the first one's death is old news.
    pool.send({ type: 'roundtable.pool.hold', sessionId: 's1', holder: c });
    a.exit('killed');
    b.exit('normal');
    await flush();
    expect(downs).toEqual([]);
    expect(heldSessions(pool.getSnapshot())).toEqual(['s1']);
    c.exit({ error: 'boom' });
    await flush();
    expect(downs).toEqual([['s1', { error: 'boom' }]]);
    expect(heldSessions(pool.getSnapshot())).toEqual([]);
  });

  it('a stopped pool takes its monitors back: a later death reaches nobody', async () => {
    const { pool, downs } = startPool();
    const a = new Holder('a');
    pool.send({ type: 'roundtable.pool.hold', sessionId: 's1', holder: a });
    pool.stop();
    a.exit('killed');
    await flush();
    expect(downs).toEqual([]);
  });

  it('its snapshot is data: the context survives JSON as it is', () => {
    const { pool } = startPool();
    pool.send({ type: 'roundtable.pool.hold', sessionId: 's1', holder: new Holder('a') });
    pool.send({ type: 'roundtable.pool.hold', sessionId: 's2', holder: new Holder('b') });
    const context = pool.getSnapshot().context;
    expect(JSON.parse(JSON.stringify(context))).toEqual(context);
    expect(context).toEqual({ held: { s1: 1, s2: 2 }, holds: 2 });
    pool.stop();
  });

  it('agrees with a model over random holds, releases and deaths', async () => {
    const sessions = ['s1', 's2', 's3'];
    type Model = { held: Map<string, Holder>; told: string[] };
    type Real = ReturnType<typeof startPool> & { holders: Holder[] };
    const hold = (sessionId: string) => ({
      check: () => true,
      async run(m: Model, r: Real) {
        const h = new Holder(`h${r.holders.length}`);
        r.holders.push(h);
        m.held.set(sessionId, h);
        r.pool.send({ type: 'roundtable.pool.hold', sessionId, holder: h });
      },
      toString: () => `hold(${sessionId})`,
    });
    const release = (sessionId: string) => ({
      check: () => true,
      async run(m: Model, r: Real) {
        m.held.delete(sessionId);
        r.pool.send({ type: 'roundtable.pool.release', sessionId });
      },
      toString: () => `release(${sessionId})`,
    });
    const die = (pick: number) => ({
      check: (m: Model) => m.held.size > 0,
      async run(m: Model, r: Real) {
        const live = r.holders.filter((h) => h.exitReason() === undefined);
        const h = live[pick % Math.max(1, live.length)];
        if (h === undefined) return;
        for (const [sessionId, holder] of m.held) {
          if (holder === h) {
            m.held.delete(sessionId);
            m.told.push(sessionId);
          }
        }
        h.exit('killed');
        await flush();
      },
      toString: () => `die(${pick})`,
    });
    const session = fc.constantFrom(...sessions);
    await fc.assert(
      fc.asyncProperty(
        fc.commands([session.map(hold), session.map(release), fc.nat(5).map(die)], {
          maxCommands: 30,
        }),
        async (cmds) => {
          const real: Real = { ...startPool(), holders: [] };
          const model: Model = { held: new Map(), told: [] };
          await fc.asyncModelRun(() => ({ model, real }), cmds);
          await flush();
          expect(real.downs.map(([s]) => s)).toEqual(model.told);
          expect(heldSessions(real.pool.getSnapshot()).sort()).toEqual(
            [...model.held.keys()].sort(),
          );
          real.pool.stop();
        },
      ),
      { numRuns: 200 },
    );
  });
});
