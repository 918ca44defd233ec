/**
 * How `start` logs the runtime's background reports (src/cli/backgroundLog.ts;
 * its pure half's examples run in pureModules.docs.test.ts): a store outage
 * once per window per kind, the next record counting what it stood for.
 */
import { describe, expect, it } from 'vitest';
import { OwnerDownNotice } from '../../src/actors/clusterLivenessWiring.js';
import { BackgroundLog, OUTAGE_WINDOW_MS } from '../../src/cli/backgroundLog.js';

function harness() {
  let t = 1_000;
  const records: { level: string; fields: Record<string, unknown>; msg: string }[] = [];
  const logger = {
    info: (fields: object, msg: string) =>
      records.push({ level: 'info', fields: fields as Record<string, unknown>, msg }),
    warn: (fields: object, msg: string) =>
      records.push({ level: 'warn', fields: fields as Record<string, unknown>, msg }),
  };
  const log = new BackgroundLog(logger as never, () => t);
  return {
    log,
    records,
    advance: (ms: number) => {
      t += ms;
    },
  };
}

const refused = () =>
  new Error('connect ECONNREFUSED 127.0.0.1:6434', { cause: { code: 'ECONNREFUSED' } });

describe('BackgroundLog', () => {
  it('says a store outage once per window, then how many reports it stood for', () => {
    const h = harness();
    // Three loops failing every second for 45 s.
    for (let s = 0; s < 45; s++) {
      for (let loop = 0; loop < 3; loop++) h.log.report(refused());
      h.advance(1_000);
    }
    expect(h.records.map((r) => [r.level, r.msg])).toEqual([
      ['warn', 'background error'],
      ['warn', 'background error'],
    ]);
    expect(h.records[0]?.fields).not.toHaveProperty('repeated');
    expect(h.records[1]?.fields).toMatchObject({ reason: 'ECONNREFUSED', repeated: 89 });
    expect(OUTAGE_WINDOW_MS).toBe(30_000);
  });

  it('lets another kind of outage through, and every error that is not one', () => {
    const h = harness();
    h.log.report(refused());
    h.log.report(Object.assign(new Error('terminating connection'), { code: '57P01' }));
    h.log.report(new Error('a bug'));
    h.log.report(new Error('a bug'));
    expect(h.records).toHaveLength(4);
  });

  it('logs a boot that stopped at info and one that died as a warning', () => {
    const h = harness();
    h.log.report(new OwnerDownNotice('b@1', 'no_beat'));
    h.log.report(new OwnerDownNotice('c@1', 'beat_stale'));
    expect(h.records.map((r) => [r.level, r.fields.owner])).toEqual([
      ['info', 'b@1'],
      ['warn', 'c@1'],
    ]);
  });
});
