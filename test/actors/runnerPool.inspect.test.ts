/**
 * The RunnerPool's monitors as an inspector sees them with its gate closed
 * (the node's default: nobody watching when a slot is granted). The pool's
 * watcher names the pool, so the edge is drawn from it, exact, not left to
 * an inference that needs the pool's event frames.
 */
import { fc, test } from '@fast-check/vitest';
import { describe, expect } from 'vitest';
import type { AnyActorRef } from 'xstate';
import { runnerPoolMachine } from '../../src/actors/runnerPool.js';
import { startSupervisor } from '../../src/supervisor/index.js';
import { createInspector } from '../../src/ui-server/inspector/createInspector.js';
import { worker } from '../supervisor/workers.js';

describe('RunnerPool monitors seen through a closed inspection gate', () => {
  test.prop([fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 1, maxLength: 8 })], {
    numRuns: 20,
  })('every hold’s monitor is drawn from the pool, not from an unnamed callback', async (holds) => {
    const inspector = createInspector({});
    const holders = [0, 1, 2, 3].map((i) => ({
      id: `h${i}`,
      start: { logic: worker },
      restart: 'temporary' as const,
    }));
    const sup = await startSupervisor(
      {
        children: [
          { id: 'pool', start: { logic: runnerPoolMachine, input: { onDown: () => {} } } },
          ...holders,
        ],
      },
      { inspect: inspector.gate },
    );
    try {
      expect(inspector.gate.isOpen).toBe(false);
      const pool = sup.child('pool') as AnyActorRef;
      for (const h of holds) {
        const holder = sup.child(`h${h}`) as AnyActorRef;
        pool.send({ type: 'roundtable.pool.hold', sessionId: `s${h}`, holder });
      }
      const edges = Object.values(inspector.collector.tree.monitors);
      expect(edges).toHaveLength(new Set(holds).size);
      for (const e of edges) {
        expect(e.watcherSessionId).toBe(pool.sessionId);
        expect(e.inferred).toBe(false);
      }
    } finally {
      await sup.shutdown();
    }
  });
});
