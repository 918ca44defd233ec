/**
 * The layer rules catch what they claim to (a fixture tree breaks each once),
 * the code keeps them, and docs/architecture.md shows the layers as the code
 * has them.
 */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import * as mod from '../../scripts/layersGraph.js';
import { cruiseSrc, currentBlock } from '../../scripts/layersGraph.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../scripts/layersGraph.ts', import.meta.url), mod);

interface Violations {
  summary: {
    violations: Array<{ rule: { name: string }; from: string; to: string }>;
  };
}

const FIXTURE = new URL('../fixtures/layers/', import.meta.url).pathname;

describe('the layer rules (.dependency-cruiser.cjs)', () => {
  it('catch each broken rule of the fixture tree, and only those', async () => {
    const result = (await cruiseSrc(FIXTURE)) as unknown as Violations;
    const found = result.summary.violations
      .map((v) => `${v.rule.name}: ${v.from} -> ${v.to.replace(/^.*node_modules\//, '')}`)
      .sort();
    expect(found).toEqual(
      [
        'layer-machines: src/machines/readsStore.ts -> src/db/store.ts',
        'layer-ui-server: src/ui-server/startsRunners.ts -> src/actors/usesStore.ts',
        'pure-client: src/client/readsFiles.ts -> fs',
        'pure-supervisor: src/supervisor/queriesPostgres.ts -> pg/esm/index.mjs',
        'no-circular: src/board/ping.ts -> src/board/pong.ts',
        'no-circular-types: src/board/ping.ts -> src/board/pong.ts',
        'no-circular-types: src/actors/cardList.ts -> src/actors/cardShape.ts',
      ].sort(),
    );
  }, 120_000);

  it('hold for src/, and the picture in docs/architecture.md is the current one', async () => {
    const cruise = await cruiseSrc();
    expect((cruise as unknown as Violations).summary.violations).toEqual([]);
    // The package rules can only fire if packages stay in the graph (an `exclude` of
    // node_modules once dropped them silently): a pure layer's xstate import is seen.
    const machinesDeps = cruise.modules
      .filter((m) => m.source.startsWith('src/machines/'))
      .flatMap((m) => m.dependencies.map((d) => d.resolved));
    expect(machinesDeps.some((r) => r.startsWith('node_modules/xstate/'))).toBe(true);
    const doc = await readFile(new URL('../../docs/architecture.md', import.meta.url), 'utf8');
    expect(doc, 'run npm run layers:graph').toContain(await currentBlock(cruise));
  }, 120_000);
});
