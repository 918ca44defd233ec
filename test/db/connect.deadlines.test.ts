import { describe, expect, it } from 'vitest';
import * as options from '../../src/db/connectOptions.js';
import { CONNECT_DEFAULTS, validateConnectOptions } from '../../src/db/connectOptions.js';
import { ValidationError } from '../../src/db/errors.js';
import * as listen from '../../src/db/listen.js';
import { assertChannel, listenRetryDelay } from '../../src/db/listen.js';
import * as transient from '../../src/db/transientErrors.js';
import {
  DbTimeoutError,
  isTransientDbError,
  toDbTimeoutError,
  transientReason,
} from '../../src/db/transientErrors.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/db/transientErrors.ts', import.meta.url), transient);
runDocExamples(new URL('../../src/db/connectOptions.ts', import.meta.url), options);
runDocExamples(new URL('../../src/db/listen.ts', import.meta.url), listen);

const withCode = (code: string, message = 'x') => Object.assign(new Error(message), { code });

function validationError(fn: () => unknown): ValidationError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return error as ValidationError;
  }
  throw new Error('expected a ValidationError');
}

describe('connect options', () => {
  it('has documented deadline defaults, the client one 5 s past the server one', () => {
    const o = validateConnectOptions({});
    expect(o).toMatchObject({
      statementTimeoutMs: 15_000,
      lockTimeoutMs: 5_000,
      idleInTransactionTimeoutMs: 30_000,
      queryTimeoutMs: 20_000,
    });
    expect(validateConnectOptions({ statementTimeoutMs: 200 }).queryTimeoutMs).toBe(5_200);
    expect(validateConnectOptions({ queryTimeoutMs: 50 }).queryTimeoutMs).toBe(50);
    expect(CONNECT_DEFAULTS.listenRetryMaxMs).toBe(5_000);
  });

  it.each([
    ['statementTimeout', 'statementTimeoutMs'],
    ['locktimeoutms', 'lockTimeoutMs'],
    ['queryTimeout', 'queryTimeoutMs'],
    ['idleInTransactionTimeout', 'idleInTransactionTimeoutMs'],
  ])('rejects %s, suggesting %s', (key, near) => {
    const err = validationError(() => validateConnectOptions({ [key]: 1 } as never));
    expect(err.field).toBe(key);
    expect(err.message).toContain(`did you mean ${near}?`);
  });

  it.each([
    ['statementTimeoutMs', -1],
    ['lockTimeoutMs', 1.5],
    ['queryTimeoutMs', Number.NaN],
    ['idleInTransactionTimeoutMs', 2 ** 31],
    ['connectTimeoutMs', 0],
    ['listenHeartbeatMs', 0],
    ['poolMax', 0],
  ])('rejects %s = %s, naming the key', (key, value) => {
    const err = validationError(() => validateConnectOptions({ [key]: value }));
    expect(err.field).toBe(key);
  });

  it('allows 0 (the server setting) for the server-side deadlines', () => {
    const o = validateConnectOptions({
      statementTimeoutMs: 0,
      lockTimeoutMs: 0,
      idleInTransactionTimeoutMs: 0,
    });
    expect(o.queryTimeoutMs).toBe(0);
  });

  it('rejects a retry ceiling below its floor', () => {
    const err = validationError(() =>
      validateConnectOptions({ listenRetryMinMs: 500, listenRetryMaxMs: 100 }),
    );
    expect(err.field).toBe('listenRetryMaxMs');
  });
});

describe('isTransientDbError', () => {
  it.each([
    ['admin shutdown', withCode('57P01')],
    ['crash shutdown', withCode('57P02')],
    ['cannot connect now', withCode('57P03')],
    ['statement timeout', withCode('57014')],
    ['lock timeout', withCode('55P03')],
    ['idle in transaction timeout', withCode('25P03')],
    ['serialization failure', withCode('40001')],
    ['deadlock', withCode('40P01')],
    ['too many connections', withCode('53300')],
    ['connection failure', withCode('08006')],
    ['connection refused', withCode('ECONNREFUSED')],
    ['connection reset', withCode('ECONNRESET')],
    ['terminated', new Error('Connection terminated unexpectedly')],
    ['client deadline', new Error('Query read timeout')],
    ['pool connect timeout', new Error('timeout exceeded when trying to connect')],
    ['typed timeout', new DbTimeoutError('client', 'x')],
    ['under a cause', new Error('wrapped', { cause: withCode('57P01') })],
    ['in an AggregateError', new AggregateError([new Error('a'), withCode('ECONNREFUSED')])],
  ])('says %s is transient', (_, error) => {
    expect(isTransientDbError(error)).toBe(true);
    expect(transientReason(error)).toEqual(expect.any(String));
  });

  it.each([
    ['unique violation', withCode('23505')],
    ['syntax error', withCode('42601')],
    ['undefined table', withCode('42P01')],
    ['a validation error', new ValidationError('x', 'bad')],
    ['a plain error', new Error('boom')],
    ['not an error', 'Connection terminated'],
    ['null', null],
  ])('says %s is not', (_, error) => {
    expect(isTransientDbError(error)).toBe(false);
  });

  it('stops at a cause cycle', () => {
    const a = new Error('a');
    const b = new Error('b', { cause: a });
    Object.assign(a, { cause: b });
    expect(isTransientDbError(a)).toBe(false);
  });
});

describe('toDbTimeoutError', () => {
  it.each([
    ['57014', 'statement'],
    ['55P03', 'lock'],
    ['25P03', 'idle_in_transaction'],
  ] as const)('types SQLSTATE %s as a %s timeout, keeping the cause', (code, kind) => {
    const cause = withCode(code, 'canceling statement due to statement timeout');
    const typed = toDbTimeoutError(cause);
    expect(typed).toBeInstanceOf(DbTimeoutError);
    expect(typed).toMatchObject({ code: 'DB_TIMEOUT', kind, cause });
  });

  it('types the client and pool deadlines', () => {
    expect(toDbTimeoutError(new Error('Query read timeout'))?.kind).toBe('client');
    expect(toDbTimeoutError(new Error('timeout exceeded when trying to connect'))?.kind).toBe(
      'connect',
    );
  });

  it('leaves every other error alone', () => {
    expect(toDbTimeoutError(withCode('23505'))).toBeUndefined();
    expect(toDbTimeoutError(new DbTimeoutError('lock', 'x'))).toBeUndefined();
    expect(toDbTimeoutError(undefined)).toBeUndefined();
  });
});

describe('listen helpers', () => {
  it.each(['jobs', '_x', 'session_queued_2', 'a'.repeat(63)])('accepts channel %s', (c) => {
    expect(() => assertChannel(c)).not.toThrow();
  });

  it.each(['', 'Jobs', '2jobs', 'jobs-x', 'jobs;drop', '"jobs"', 'a'.repeat(64)])(
    'rejects channel %j',
    (c) => {
      expect(validationError(() => assertChannel(c)).field).toBe('channel');
    },
  );

  it('backs off by doubling up to the cap', () => {
    expect([0, 1, 2, 3, 4, 5, 6, 100].map((n) => listenRetryDelay(n, 100, 5000))).toEqual([
      100, 200, 400, 800, 1600, 3200, 5000, 5000,
    ]);
  });
});
