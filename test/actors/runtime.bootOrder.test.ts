/**
 * Boot order: this boot's heartbeat row is written, and its first tick
 * sent, before the board reads its history. The board's load reads every task and then builds every card
 * in one go; started first, its reads queue ahead of the beat on the pool
 * and its card building holds the event loop while the beat waits, so a
 * node with a long history would beat late (another node reads a boot with
 * no row as one that stopped on purpose).
 */
import {
  type KyselyPlugin,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  type QueryResult,
  type RootOperationNode,
  TableNode,
  type UnknownRow,
} from 'kysely';
import { afterEach, expect, test } from 'vitest';
import { createTestRuntime, type TestRuntime } from '../../src/testing/index.js';
import { describeEachEngine } from '../support/databases.js';

let h: TestRuntime | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** Writes down, in the order they are sent, the table each insert and select names first. */
class StatementLog implements KyselyPlugin {
  readonly seen: string[] = [];
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    const node = args.node;
    if (node.kind === 'RawNode' && node.sqlFragments.join('').includes('rt_tick(')) {
      this.seen.push('tick');
    }
    if (node.kind === 'InsertQueryNode')
      this.seen.push(`insert ${node.into?.table.identifier.name}`);
    if (node.kind === 'SelectQueryNode') {
      const from = node.from?.froms[0];
      if (from !== undefined && TableNode.is(from))
        this.seen.push(`select ${from.table.identifier.name}`);
    }
    return node;
  }
  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }
}

describeEachEngine('runtime boot order', (getDb) => {
  test("the heartbeat row is written before the board's load reads the tasks", async () => {
    const log = new StatementLog();
    h = await createTestRuntime({ db: getDb().db.withPlugin(log) });
    await h.runtime.booted;
    const beat = log.seen.indexOf('insert node_heartbeats');
    const load = log.seen.indexOf('select tasks');
    expect(beat, log.seen.join('\n')).toBeGreaterThanOrEqual(0);
    expect(load, log.seen.join('\n')).toBeGreaterThan(beat);
  });

  test("the node's first tick goes before the board's load reads the tasks", async () => {
    const log = new StatementLog();
    h = await createTestRuntime({ db: getDb().db.withPlugin(log) });
    await h.runtime.booted;
    const tick = log.seen.indexOf('tick');
    const load = log.seen.indexOf('select tasks');
    expect(tick, log.seen.join('\n')).toBeGreaterThanOrEqual(0);
    expect(load, log.seen.join('\n')).toBeGreaterThan(tick);
  });
});
