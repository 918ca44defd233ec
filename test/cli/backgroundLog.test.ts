/**
 * How `start` logs the runtime's background reports (src/cli/backgroundLog.ts;
 * its pure half's examples run in pureModules.docs.test.ts): a store outage
 * once per window per kind, the next record counting what it stood for; a
 * listener or an inspection observer that throws on everything, the same.
 */
import { describe, expect, it } from 'vitest';
import { OwnerDownNotice } from '../../src/actors/clusterLivenessWiring.js';
import { RuntimeListenerError } from '../../src/actors/runtimeListenerError.js';
import { BackgroundLog, OUTAGE_WINDOW_MS } from '../../src/cli/backgroundLog.js';
import { InspectObserverError } from '../../src/supervisor/errors.js';

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

  it('says a listener or observer that throws on everything once per window per kind', () => {
    const h = harness();
    // A subscriber and an observer throwing on every card and frame of 1,000 jobs a second, for 40 s.
    for (let s = 0; s < 40; s++) {
      for (let i = 0; i < 100; i++) {
        h.log.report(new RuntimeListenerError('board', new Error('bug')));
        h.log.report(new InspectObserverError('@xstate.snapshot', new Error('bug')));
      }
      h.advance(1_000);
    }
    h.log.report(new RuntimeListenerError('line', new Error('bug')));
    expect(h.records.map((r) => r.fields.reason)).toEqual([
      'listener:board',
      'inspect_observer',
      'listener:board',
      'inspect_observer',
      'listener:line',
    ]);
    expect(h.records[2]?.fields).toMatchObject({ repeated: 2_999 });
    expect(h.records[0]?.fields).not.toHaveProperty('repeated');
  });
});
