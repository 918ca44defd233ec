/** Opening the store from the CLI's settings (the connection itself: test/db/connect*.test.ts). */
import { describe, expect, it, vi } from 'vitest';
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
  it('logs a connection that is not a session as an error, in the CLI’s words', () => {
    const errors: Array<{ fields: object; message: string }> = [];
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    try {
      const say = storeErrorsTo({ error: (fields, message) => errors.push({ fields, message }) });
      say(new PooledSessionError(5000, 20));
      expect(errors).toHaveLength(1);
      expect(errors[0]?.fields).toEqual({ code: 'DB_POOLED_SESSION' });
      expect(errors[0]?.message).toMatch(/takes no grants/);
      expect(errors[0]?.message).toMatch(/--pooler transaction/);
      expect(errors[0]?.message).not.toMatch(/connect with/);
      expect(warn).not.toHaveBeenCalled();
      // Anything else stays the driver's default: a process warning.
      const lost = new Error('listener on x lost its connection');
      say(lost);
      expect(warn).toHaveBeenCalledWith(lost);
      expect(errors).toHaveLength(1);
    } finally {
      warn.mockRestore();
    }
  });
});
