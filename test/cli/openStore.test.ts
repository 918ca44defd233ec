/** Opening the store from the CLI's settings (the connection itself: test/db/connect*.test.ts). */
import { describe, expect, it } from 'vitest';
import { CliError } from '../../src/cli/exitCodes.js';
import { openStore } from '../../src/cli/openStore.js';

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
