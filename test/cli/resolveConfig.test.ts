import { describe, expect, it } from 'vitest';
import * as cliConfig from '../../src/cli/cliConfig.js';
import { SETTINGS } from '../../src/cli/cliSettings.js';
import * as exitCodes from '../../src/cli/exitCodes.js';
import * as parse from '../../src/cli/parseArgv.js';
import * as resolve from '../../src/cli/resolveConfig.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/cli/resolveConfig.ts', import.meta.url), resolve);
runDocExamples(new URL('../../src/cli/parseArgv.ts', import.meta.url), parse);
runDocExamples(new URL('../../src/cli/exitCodes.ts', import.meta.url), exitCodes);

const { resolveConfig } = resolve;

function errorOf(fn: () => unknown): exitCodes.ConfigError {
  try {
    fn();
  } catch (error) {
    if (error instanceof exitCodes.ConfigError) return error;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('resolveConfig', () => {
  it('runs with nothing given', () => {
    const { config } = resolveConfig({});
    expect(config.dataDir).toBe('./.roundtable');
    expect(config.backend).toBe('auto');
    expect(config.databaseUrl).toBeUndefined();
  });

  it('layers defaults < file < env < flags, and remembers each origin', () => {
    const { config, origins } = resolveConfig({
      file: { path: 'rt.json', value: { port: 1, host: '0.0.0.0', caps: { defaultUserCap: 5 } } },
      env: { ROUNDTABLE_PORT: '2', ROUNDTABLE_MAX_RUNNING: '7' },
      flags: { '--max-running': '8' },
    });
    expect(config.port).toBe(2);
    expect(config.host).toBe('0.0.0.0');
    expect(config.caps).toEqual({ maxRunning: 8, defaultUserCap: 5 });
    expect(origins).toMatchObject({
      port: 'ROUNDTABLE_PORT',
      host: 'config file rt.json',
      'caps.maxRunning': '--max-running',
    });
  });

  it('names the key and its source when a value is out of range', () => {
    const e = errorOf(() => resolveConfig({ env: { ROUNDTABLE_PORT: '70000' } }));
    expect(e.key).toBe('port');
    expect(e.source).toBe('ROUNDTABLE_PORT');
    expect(e.message).toMatch(/^ROUNDTABLE_PORT: port /);
    expect(e.exitCode).toBe(2);
  });

  it.each([
    ['--reconcile-ms', 'reconcileMs'],
    ['--shutdown-ms', 'shutdownMs'],
    ['--poll-ms', 'pollMs'],
    ['--adopt-budget-ms', 'adoptBudgetMs'],
  ])('refuses a %s past what a timer can wait (it would fire after 1 ms)', (flag, key) => {
    const e = errorOf(() => resolveConfig({ flags: { [flag]: '3000000000' } }));
    expect(e.key).toBe(key);
    expect(e.message).toMatch(/at most 2147483647/);
    expect(e.exitCode).toBe(2);
    expect(resolveConfig({ flags: { [flag]: '2147483647' } }).config).toBeDefined();
  });

  it('names a nested file key and suggests the near one', () => {
    const e = errorOf(() =>
      resolveConfig({ file: { path: 'rt.json', value: { caps: { maxRuning: 3 } } } }),
    );
    expect(e.key).toBe('caps.maxRuning');
    expect(e.message).toContain('did you mean "maxRunning"?');
  });

  it('names a bad value in a file record', () => {
    const e = errorOf(() =>
      resolveConfig({ file: { path: 'rt.json', value: { tokens: { users: { ann: 'short' } } } } }),
    );
    expect(e.key).toBe('tokens.users.ann');
    expect(e.source).toBe('config file rt.json');
  });

  it('names a user called __proto__ in the file, which a record would drop unheard', () => {
    const file = (users: string) => ({
      file: { path: 'rt.json', value: JSON.parse(`{"tokens": {"users": ${users}}}`) },
    });
    const token = 'a'.repeat(20);
    const e = errorOf(() =>
      resolveConfig(file(`{"ann": "${'b'.repeat(20)}", "__proto__": "${token}"}`)),
    );
    expect([e.key, e.source, e.code]).toEqual([
      'tokens.users.__proto__',
      'config file rt.json',
      'CLI_CONFIG',
    ]);
    expect(e.message).toBe(
      'config file rt.json: tokens.users.__proto__ is not a user name a token can be given to',
    );
    // Other names Object.prototype has are plain users (boardTokens ownToken reads them so).
    expect(resolveConfig(file(`{"constructor": "${token}"}`)).config.tokens.users).toEqual({
      constructor: token,
    });
  });

  it('rejects an unknown enum value from a flag', () => {
    const e = errorOf(() => resolveConfig({ flags: { '--backend': 'kubernetes' } }));
    expect(e.key).toBe('backend');
    expect(e.source).toBe('--backend');
  });

  it('takes a transaction pooler from --pooler or ROUNDTABLE_POOLER, default none, and nothing else', () => {
    expect(resolveConfig({}).config.pooler).toBe('none');
    expect(resolveConfig({ flags: { '--pooler': 'transaction' } }).config.pooler).toBe(
      'transaction',
    );
    expect(resolveConfig({ env: { ROUNDTABLE_POOLER: 'transaction' } }).config.pooler).toBe(
      'transaction',
    );
    const e = errorOf(() => resolveConfig({ flags: { '--pooler': 'session' } }));
    expect(e.message).toMatch(/pooler/);
  });

  it('takes the board’s connections per address from --per-address or the env, under its total', () => {
    expect(resolveConfig({}).config.perAddress).toBeUndefined();
    expect(resolveConfig({ flags: { '--per-address': '2000' } }).config.perAddress).toBe(2_000);
    expect(resolveConfig({ env: { ROUNDTABLE_PER_ADDRESS: '64' } }).config.perAddress).toBe(64);
    expect(errorOf(() => resolveConfig({ flags: { '--per-address': '0' } })).message).toMatch(
      /^--per-address: perAddress must be/,
    );
    expect(errorOf(() => resolveConfig({ flags: { '--per-address': '12000' } })).message).toMatch(
      /perAddress must be at most 11999/,
    );
  });

  it('takes how long a beat vouches for its node from --dead-after-ms or the env, within 2 s and a day', () => {
    expect(resolveConfig({}).config.deadAfterMs).toBeUndefined();
    expect(resolveConfig({ flags: { '--dead-after-ms': '30000' } }).config.deadAfterMs).toBe(
      30_000,
    );
    expect(resolveConfig({ env: { ROUNDTABLE_DEAD_AFTER_MS: '15000' } }).config.deadAfterMs).toBe(
      15_000,
    );
    const short = errorOf(() => resolveConfig({ flags: { '--dead-after-ms': '500' } }));
    expect(short.message).toMatch(/^--dead-after-ms: deadAfterMs must be at least 2000/);
    const long = errorOf(() => resolveConfig({ env: { ROUNDTABLE_DEAD_AFTER_MS: '90000000' } }));
    expect(long.message).toMatch(/^ROUNDTABLE_DEAD_AFTER_MS: deadAfterMs must be at most 86400000/);
    expect(errorOf(() => resolveConfig({ flags: { '--dead-after-ms': '10s' } })).message).toMatch(
      /must be an integer/,
    );
  });

  it('takes how long finished work is kept from --retention-ms or the env, default 7 days, 0 for ever', () => {
    expect(resolveConfig({}).config.retentionMs).toBe(604_800_000);
    expect(resolveConfig({ flags: { '--retention-ms': '0' } }).config.retentionMs).toBe(0);
    expect(resolveConfig({ env: { ROUNDTABLE_RETENTION_MS: '3600000' } }).config.retentionMs).toBe(
      3_600_000,
    );
    const negative = errorOf(() => resolveConfig({ flags: { '--retention-ms': '-1' } }));
    expect(negative.message).toMatch(/^--retention-ms: retentionMs /);
  });

  it('takes the default time limit from --default-time-limit-ms or the env, 0 (none) by default', () => {
    expect(resolveConfig({}).config.defaultTimeLimitMs).toBe(0);
    const flag = resolveConfig({ flags: { '--default-time-limit-ms': '21600000' } });
    expect(flag.config.defaultTimeLimitMs).toBe(21_600_000);
    const env = resolveConfig({ env: { ROUNDTABLE_DEFAULT_TIME_LIMIT_MS: '60000' } });
    expect(env.config.defaultTimeLimitMs).toBe(60_000);
    const short = errorOf(() => resolveConfig({ flags: { '--default-time-limit-ms': '999' } }));
    expect(short.message).toMatch(/^--default-time-limit-ms: defaultTimeLimitMs /);
  });

  it('ignores empty variables (an unset DOCKER_HOST in a compose file)', () => {
    expect(resolveConfig({ env: { DOCKER_HOST: '' } }).config.dockerHost).toBeUndefined();
  });

  it('does not warn about the test suites’ own variables', () => {
    expect(resolveConfig({ env: { ROUNDTABLE_TEST_DATABASE_URL: 'x' } }).warnings).toEqual([]);
  });

  it('applies a command default under the file', () => {
    const r = resolveConfig({ commandDefaults: { dataDir: './.roundtable/demo' } });
    expect(r.config.dataDir).toBe('./.roundtable/demo');
  });

  it('every setting has a flag or an env name, and each name is unique', () => {
    const names = SETTINGS.flatMap((s) => [s.flag, s.env]).filter(Boolean);
    expect(new Set(names).size).toBe(names.length);
    for (const s of SETTINGS) expect(s.flag ?? s.env).toBeDefined();
  });

  it('takes the namespace from ROUNDTABLE_NAMESPACE or --namespace, default "default"', () => {
    expect(resolveConfig({}).config.namespace).toBe('default');
    expect(resolveConfig({ env: { ROUNDTABLE_NAMESPACE: 'team-a' } }).config.namespace).toBe(
      'team-a',
    );
    const r = resolveConfig({
      env: { ROUNDTABLE_NAMESPACE: 'team-a' },
      flags: { '--namespace': 'staging' },
    });
    expect(r.config.namespace).toBe('staging');
    expect(r.origins.namespace).toBe('--namespace');
  });

  it.each(['Prod', 'a=b', '-a', 'x'.repeat(33)])(
    'rejects the namespace %j, naming its source',
    (bad) => {
      const e = errorOf(() => resolveConfig({ env: { ROUNDTABLE_NAMESPACE: bad } }));
      expect(e.key).toBe('namespace');
      expect(e.source).toBe('ROUNDTABLE_NAMESPACE');
    },
  );

  it('defaultNodeId keeps only what a node id may hold', () => {
    expect(cliConfig.defaultNodeId('my host (1)')).toBe('my-host--1-');
    expect(cliConfig.defaultNodeId('---')).toBe('node');
  });
});
