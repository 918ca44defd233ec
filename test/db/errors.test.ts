/** The store's boundary errors: their codes, and the advice a refused connect carries. */
import { describe, expect, it } from 'vitest';
import * as errors from '../../src/db/errors.js';
import { ConnectError } from '../../src/db/errors.js';
import { runDocExamples } from '../support/docExamples.js';

describe('ConnectError', () => {
  it('says what went wrong, and what to do when the cause says so', () => {
    const cause = new Error('connect ECONNREFUSED 127.0.0.1:5432');
    const plain = new ConnectError('cannot reach the postgres store', { cause });
    expect([plain.code, plain.message, plain.summary, plain.advice, plain.cause]).toEqual([
      'DB_CONNECT',
      'cannot reach the postgres store',
      'cannot reach the postgres store',
      null,
      cause,
    ]);
    const advised = new ConnectError('cannot reach the postgres store', {
      advice: "connect with { pooler: 'transaction' }",
    });
    expect(advised.message).toBe(
      "cannot reach the postgres store: connect with { pooler: 'transaction' }",
    );
    expect(advised.summary).toBe('cannot reach the postgres store');
  });
});

runDocExamples(new URL('../../src/db/errors.ts', import.meta.url), errors);
