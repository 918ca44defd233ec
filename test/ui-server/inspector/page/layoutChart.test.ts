import { fc, test } from '@fast-check/vitest';
import { describe, expect } from 'vitest';
import { runnerPoolMachine } from '../../../../src/actors/runnerPool.js';
import { containerRunMachine } from '../../../../src/machines/containerRun.js';
import { taskRunnerMachine } from '../../../../src/machines/taskRunner.js';
import {
  machineGraph,
  type StatechartGraph,
} from '../../../../src/ui-server/inspector/machineGraph.js';
import { newElk } from '../../../../src/ui-server/inspector/page/elkEngine.js';
import * as mod from '../../../../src/ui-server/inspector/page/layoutChart.js';
import { runDocExamples } from '../../../support/docExamples.js';
import { job } from '../fixtures.js';

runDocExamples(
  new URL('../../../../src/ui-server/inspector/page/layoutChart.ts', import.meta.url),
  mod,
);

const elk = newElk();
const layoutChart = (g: StatechartGraph) => mod.layoutChart(g, elk);
const { overlaps } = mod;
type Rect = mod.Rect;

/** Every pair of labels, and every label against every state it is not inside. */
function collisions(l: mod.ChartLayout): string[] {
  const labels = l.edges.flatMap((e) => (e.label ? [{ id: e.id, ...e.label }] : []));
  const out: string[] = [];
  for (let i = 0; i < labels.length; i++)
    for (let j = i + 1; j < labels.length; j++)
      if (overlaps(labels[i]!, labels[j]!)) out.push(`${labels[i]!.id} x ${labels[j]!.id}`);
  const inside = (a: Rect, b: Rect) =>
    a.x >= b.x && a.y >= b.y && a.x + a.w <= b.x + b.w && a.y + a.h <= b.y + b.h;
  for (const lab of labels)
    for (const b of l.boxes)
      if (b.leaf && overlaps(lab, b) && !inside(lab, b)) out.push(`${lab.id} x ${b.id}`);
  // A compound's name is drawn in its header: no label may sit on it.
  for (const lab of labels)
    for (const b of l.boxes)
      if (
        !b.leaf &&
        overlaps(lab, { x: b.labelAt.x, y: b.labelAt.y, w: b.label.length * 7.5, h: 14 })
      )
        out.push(`${lab.id} x ${b.id} header`);
  return out;
}

function nested(l: mod.ChartLayout, g: StatechartGraph): void {
  expect(l.boxes.map((b) => b.id).sort()).toEqual(g.nodes.map((n) => n.id).sort());
  const byId = new Map(l.boxes.map((b) => [b.id, b]));
  for (const n of g.nodes) {
    if (n.parent === null) continue;
    const b = byId.get(n.id)!;
    const p = byId.get(n.parent)!;
    expect(b.x).toBeGreaterThanOrEqual(p.x);
    expect(b.y).toBeGreaterThanOrEqual(p.y);
    expect(b.x + b.w).toBeLessThanOrEqual(p.x + p.w);
    expect(b.y + b.h).toBeLessThanOrEqual(p.y + p.h);
  }
}

describe('layoutChart (ELK)', () => {
  const machines = {
    job,
    taskRunner: taskRunnerMachine,
    runnerPool: runnerPoolMachine,
    containerRun: containerRunMachine,
  };
  for (const [name, m] of Object.entries(machines)) {
    test(`${name}: every state inside its parent, every transition routed, no label on another`, async () => {
      const g = machineGraph(m)!;
      const l = await layoutChart(g);
      nested(l, g);
      const labelled = l.edges.filter((e) => e.label !== null);
      expect(labelled.map((e) => e.id).sort()).toEqual(g.edges.map((e) => e.id).sort());
      for (const e of l.edges) expect(e.points.length).toBeGreaterThanOrEqual(2);
      expect(collisions(l)).toEqual([]);
    });
  }

  test("the RunnerPool's three self-loops are three distinct loops", async () => {
    const g = machineGraph(runnerPoolMachine)!;
    const l = await layoutChart(g);
    const loops = l.edges.filter(
      (e) => e.source === 'runnerPool.ready' && e.target === 'runnerPool.ready',
    );
    expect(loops.map((e) => e.label?.text).sort()).toEqual([
      'down [currentHold]',
      'hold',
      'release',
    ]);
    const routes = new Set(loops.map((e) => JSON.stringify(e.points)));
    expect(routes.size).toBe(3);
  });

  test('the TaskRunner fits a panel: under 1,100 px wide at its natural size (monospace estimate)', async () => {
    const l = await layoutChart(machineGraph(taskRunnerMachine)!);
    expect(l.width).toBeLessThan(1100);
  });

  // Random hierarchical charts: ELK lays every one out, labels apart.
  test.prop(
    [
      fc.integer({ min: 1, max: 6 }),
      fc.array(
        fc.tuple(
          fc.nat(9),
          fc.nat(9),
          fc.constantFrom('GO', 'done: loadRow', 'after 100 ms', 'roundtable.pool.hold'),
        ),
        { maxLength: 14 },
      ),
    ],
    { numRuns: 15 },
  )(
    'random charts: boxes nest, labels never collide',
    async (n, pairs) => {
      const nodes: StatechartGraph['nodes'] = [
        { id: 'r', key: 'r', type: 'compound', parent: null, initial: 'r.s0' },
        { id: 'r.box', key: 'box', type: 'compound', parent: 'r', initial: 'r.box.a' },
        { id: 'r.box.a', key: 'a', type: 'atomic', parent: 'r.box', initial: null },
        { id: 'r.box.b', key: 'b', type: 'final', parent: 'r.box', initial: null },
        ...Array.from({ length: n }, (_, i) => ({
          id: `r.s${i}`,
          key: `state${i}`,
          type: 'atomic',
          parent: 'r',
          initial: null,
        })),
      ];
      const ids = nodes.filter((x) => x.parent !== null).map((x) => x.id);
      const edges = pairs.map(([a, b, label], i) => ({
        id: `e${i}`,
        source: ids[a % ids.length]!,
        target: ids[b % ids.length]!,
        label,
        guard: null,
      }));
      const g = { rootId: 'r', nodes, edges };
      const l = await layoutChart(g);
      nested(l, g);
      expect(collisions(l)).toEqual([]);
    },
    120_000,
  );
});
