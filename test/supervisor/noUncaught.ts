/** Test hook: every test of the calling file also proves Node saw no uncaught error. */
import { afterEach, beforeEach, expect } from 'vitest';

/**
 * Registers hooks that collect uncaught exceptions and unhandled rejections
 * during each test and fail it if there were any. Returns the list, so a
 * test that expects one can check it and empty it.
 */
export function expectNoUncaught(): unknown[] {
  const uncaught: unknown[] = [];
  const onUncaught = (e: unknown) => uncaught.push(e);
  beforeEach(() => {
    uncaught.length = 0;
    process.on('uncaughtException', onUncaught);
    process.on('unhandledRejection', onUncaught);
  });
  afterEach(async () => {
    await new Promise((r) => setImmediate(r));
    process.off('uncaughtException', onUncaught);
    process.off('unhandledRejection', onUncaught);
    expect(uncaught).toEqual([]);
  });
  return uncaught;
}
