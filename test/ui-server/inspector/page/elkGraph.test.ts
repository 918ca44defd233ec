import { describe, expect, it } from 'vitest';
import type { StatechartGraph } from '../../../../src/ui-server/inspector/machineGraph.js';
import * as mod from '../../../../src/ui-server/inspector/page/elkGraph.js';
import { runDocExamples } from '../../../support/docExamples.js';

runDocExamples(
  new URL('../../../../src/ui-server/inspector/page/elkGraph.ts', import.meta.url),
  mod,
);

const { elkGraph, estimateText, INITIAL_PREFIX, LOOP_PREFIX } = mod;

describe('elkGraph', () => {
  const graph: StatechartGraph = {
    rootId: 'm',
    nodes: [
      { id: 'm', key: 'm', type: 'parallel', parent: null, initial: 'm.a' },
      { id: 'm.a', key: 'a', type: 'compound', parent: 'm', initial: 'm.a.x' },
      { id: 'm.a.x', key: 'x', type: 'atomic', parent: 'm.a', initial: null },
      { id: 'm.b', key: 'a-long-state-name', type: 'atomic', parent: 'm', initial: null },
    ],
    edges: [
      { id: 'e1', source: 'm.a.x', target: 'm.b', label: 'GO', guard: 'ready' },
      { id: 'e2', source: 'm.a.x', target: 'nowhere', label: 'LOST', guard: null },
      { id: 'e3', source: 'm.b', target: 'm.b', label: 'TICK', guard: null },
    ],
  };
  const elk = elkGraph(graph, estimateText);
  const root = elk.children[0]!;

  it('gives a parallel state no initial dot, a compound one its dot', () => {
    expect(root.children?.map((c) => c.id)).toEqual(['m.a', 'm.b', `${LOOP_PREFIX}e3`]);
    expect(root.children?.[0]?.children?.map((c) => c.id)).toEqual([
      `${INITIAL_PREFIX}m.a`,
      'm.a.x',
    ]);
  });

  it('drops an edge to a state the graph does not hold, and labels the rest with guard', () => {
    const ids = elk.edges.map((e) => e.id);
    expect(ids).not.toContain('e2');
    expect(elk.edges.find((e) => e.id === 'e1')?.labels?.[0]?.text).toBe('GO [ready]');
  });

  it('sizes a leaf by its name, never under the minimum width', () => {
    const [, long] = root.children ?? [];
    const x = root.children?.[0]?.children?.[1];
    expect(x?.width).toBe(64);
    expect(long?.width).toBeGreaterThan(64);
    expect(long?.height).toBe(32);
  });

  it('puts a loop label node next to its state, inside the state’s parent', () => {
    const loop = root.children?.find((c) => c.id === `${LOOP_PREFIX}e3`);
    const size = estimateText('TICK', 'edge');
    expect(loop).toEqual({
      id: `${LOOP_PREFIX}e3`,
      width: Math.ceil(size.w) + 4,
      height: Math.ceil(size.h) + 2,
    });
  });
});
