/** Opening the store from the CLI's settings (the connection itself: test/db/connect*.test.ts). */
import { describe, expect, it } from 'vitest';
import { CliError } from '../../src/cli/exitCodes.js';
import { openStore, storeErrorsTo } from '../../src/cli/openStore.js';
import { PooledSessionError } from '../../src/db/errors.js';

const quiet = {
  isTTY: false,
  write: () => undefined,
  logger: { info: () => undefined, error: () => undefined },
};

describe('openStore', () => {
  it('refuses a transaction pooler before PGlite, which runs in this process', async () => {
    const error = await openStore(
      { dataDir: '/nonexistent/never-created', pooler: 'transaction' },
      quiet,
    ).then(
      () => {
        throw new Error('expected a CliError');
      },
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(CliError);
    expect((error as CliError).code).toBe('CLI_CONFIG');
    expect((error as CliError).message).toMatch(/--database-url/);
  });
});

describe('storeErrorsTo', () => {
  it('logs a connection that is not a session as an error in the CLI’s words, anything else as a warning', () => {
    const said: Array<{ level: 'error' | 'warn'; fields: object; message: string }> = [];
    const say = storeErrorsTo({
      error: (fields, message) => said.push({ level: 'error', fields, message }),
      warn: (fields, message) => said.push({ level: 'warn', fields, message }),
    });
    say(new PooledSessionError(5000, 20));
    expect(said).toHaveLength(1);
    expect(said[0]?.level).toBe('error');
    expect(said[0]?.fields).toEqual({ code: 'DB_POOLED_SESSION' });
    expect(said[0]?.message).toMatch(/takes no grants/);
    expect(said[0]?.message).toMatch(/--pooler transaction/);
    expect(said[0]?.message).not.toMatch(/connect with/);
    // Anything else is the log's too (not a process warning on stderr), with the driver's error.
    const lost = new Error('listener on x lost its connection');
    say(lost);
    expect(said[1]).toEqual({
      level: 'warn',
      fields: { err: lost },
      message: 'a store connection of this node: listener on x lost its connection',
    });
  });
});
