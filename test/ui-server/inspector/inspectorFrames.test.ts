import { describe, expect, it } from 'vitest';
import { createActor, fromCallback } from 'xstate';
import type { ActorRecord } from '../../../src/ui-server/inspector/InspectionCollector.js';
import * as frames from '../../../src/ui-server/inspector/inspectorFrames.js';
import { EMPTY_TREE } from '../../../src/ui-server/inspector/inspectorTree.js';
import { machineGraph } from '../../../src/ui-server/inspector/machineGraph.js';
import { Ring } from '../../../src/ui-server/inspector/Ring.js';
import { runDocExamples } from '../../support/docExamples.js';
import { job } from './fixtures.js';

runDocExamples(
  new URL('../../../src/ui-server/inspector/inspectorFrames.ts', import.meta.url),
  frames,
);

function record(over: Partial<ActorRecord> & Pick<ActorRecord, 'sessionId' | 'id'>): ActorRecord {
  return {
    parentId: null,
    systemId: null,
    logic: null,
    supervisor: false,
    snapshot: undefined,
    status: 'active',
    events: new Ring(4),
    version: 0,
    ...over,
  };
}

describe('treeFrame', () => {
  it('summarises every actor, tells machines apart and names runners by their jobs', () => {
    const actors = new Map([
      ['x:1', record({ sessionId: 'x:1', id: 'root', supervisor: true })],
      ['x:2', record({ sessionId: 'x:2', id: 'ses_1', parentId: 'x:1', logic: job })],
      ['x:3', record({ sessionId: 'x:3', id: 'tick', logic: fromCallback(() => {}) })],
    ]);
    const jobs = {
      jobOf: (id: string) =>
        id === 'ses_1' ? { taskId: 't1', title: 'build', userId: 'alice' } : undefined,
    };
    const f = frames.treeFrame({ actors, tree: EMPTY_TREE, treeVersion: 7 }, jobs);
    expect(f).toMatchObject({ type: 'tree', version: 7, tree: EMPTY_TREE, roots: [] });
    expect(f.actors.map((a) => [a.id, a.supervisor, a.machine, a.job?.title ?? null])).toEqual([
      ['root', true, false, null],
      ['ses_1', false, true, 'build'],
      ['tick', false, false, null],
    ]);
  });
});

describe('actorFrame', () => {
  it('carries the state, its active nodes and context, and the graph only when asked', () => {
    const actor = createActor(job).start();
    actor.send({ type: 'START' });
    const rec = record({
      sessionId: 'x:2',
      id: 'job-1',
      logic: job,
      snapshot: actor.getSnapshot(),
    });
    const first = frames.actorFrame(rec, true, {});
    expect(first).toMatchObject({
      type: 'actor',
      sessionId: 'x:2',
      id: 'job-1',
      status: 'active',
      value: 'working',
      active: ['job', 'job.working'],
      context: { runs: 1, note: null },
      output: null,
      error: null,
    });
    expect(first.graph).toBe(machineGraph(job));
    expect('graph' in frames.actorFrame(rec, false, {})).toBe(false);
    actor.stop();
  });

  it('sends a graph of null for logic that is not a statechart, and nulls for no snapshot', () => {
    const rec = record({ sessionId: 'x:3', id: 'tick', logic: fromCallback(() => {}) });
    expect(frames.actorFrame(rec, true, {})).toMatchObject({
      value: null,
      active: [],
      context: null,
      graph: null,
    });
  });
});
