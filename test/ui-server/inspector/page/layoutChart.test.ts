import { fc, test } from '@fast-check/vitest';
import { describe, expect } from 'vitest';
import { machineGraph } from '../../../../src/ui-server/inspector/machineGraph.js';
import * as mod from '../../../../src/ui-server/inspector/page/layoutChart.js';
import { runDocExamples } from '../../../support/docExamples.js';
import { job } from '../fixtures.js';

runDocExamples(
  new URL('../../../../src/ui-server/inspector/page/layoutChart.ts', import.meta.url),
  mod,
);

describe('layoutChart', () => {
  test('every state of a real machine gets a box inside its parent', () => {
    const graph = machineGraph(job)!;
    const { boxes } = mod.layoutChart(graph);
    expect(boxes.map((b) => b.id).sort()).toEqual(graph.nodes.map((n) => n.id).sort());
    const byId = new Map(boxes.map((b) => [b.id, b]));
    for (const n of graph.nodes) {
      if (n.parent === null) continue;
      const b = byId.get(n.id)!;
      const p = byId.get(n.parent)!;
      expect(b.x).toBeGreaterThanOrEqual(p.x);
      expect(b.y).toBeGreaterThanOrEqual(p.y);
      expect(b.x + b.w).toBeLessThanOrEqual(p.x + p.w);
      expect(b.y + b.h).toBeLessThanOrEqual(p.y + p.h);
    }
  });

  // Random flat charts: siblings never overlap, whatever the edges.
  test.prop([
    fc.integer({ min: 1, max: 8 }),
    fc.array(fc.tuple(fc.nat(7), fc.nat(7)), { maxLength: 20 }),
  ])('siblings never overlap', (n, pairs) => {
    const nodes = [
      { id: 'r', key: 'r', type: 'compound', parent: null, initial: 'r.s0' },
      ...Array.from({ length: n }, (_, i) => ({
        id: `r.s${i}`,
        key: `state${i}`,
        type: 'atomic',
        parent: 'r',
        initial: null,
      })),
    ];
    const edges = pairs
      .filter(([a, b]) => a < n && b < n)
      .map(([a, b], i) => ({
        id: `e${i}`,
        source: `r.s${a}`,
        target: `r.s${b}`,
        label: 'E',
        guard: null,
      }));
    const { boxes } = mod.layoutChart({ rootId: 'r', nodes, edges });
    const kids = boxes.filter((b) => b.id !== 'r');
    for (const a of kids)
      for (const b of kids) {
        if (a === b) continue;
        const apart = a.x + a.w <= b.x || b.x + b.w <= a.x || a.y + a.h <= b.y || b.y + b.h <= a.y;
        expect(apart).toBe(true);
      }
  });
});
