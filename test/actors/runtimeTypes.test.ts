import { afterEach, describe, expect, it } from 'vitest';
import { type Runtime, RuntimeCommandError } from '../../src/actors/runtimeTypes.js';
import { BoardCommandError, isBoardCommandError } from '../../src/board/boardCommandError.js';
import * as pkg from '../../src/index.js';
import { createTestRuntime, type TestRuntime } from '../../src/testing/index.js';
import { runDocExamples } from '../support/docExamples.js';

let h: TestRuntime | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('Runtime', () => {
  it('has watch() as docs/library.md calls it: runtime.watch(), no optional call', async () => {
    h = await createTestRuntime({});
    const runtime: Runtime = h.runtime;
    // Typed as the board port's optional `watch?()`, this line was TS2722
    // ("Cannot invoke an object which is possibly 'undefined'").
    const release: () => void = runtime.watch();
    expect(typeof release).toBe('function');
    release();
  }, 60_000);
});

runDocExamples(new URL('../../src/actors/runtimeTypes.ts', import.meta.url), {
  RuntimeCommandError,
  BoardCommandError,
});

describe('RuntimeCommandError', () => {
  it("says its documented name (err.name, the stack), and is the board port's class too", () => {
    const err = new RuntimeCommandError('invalid', 'invalid title: must not be empty');
    expect(err.name).toBe('RuntimeCommandError');
    expect(String(err)).toBe('RuntimeCommandError: invalid title: must not be empty');
    expect(err.stack?.split('\n')[0]).toBe('RuntimeCommandError: invalid title: must not be empty');
    expect(err).toBeInstanceOf(RuntimeCommandError);
    expect(err).toBeInstanceOf(BoardCommandError);
    expect(isBoardCommandError(err)).toBe(true);
    expect(err.code).toBe('invalid');
    expect(pkg.RuntimeCommandError).toBe(RuntimeCommandError);
  });

  it('is what a runtime command rejects with', async () => {
    h = await createTestRuntime({});
    const refused = await h.runtime
      .submit('ann', { title: '', image: 'i', command: ['c'] })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(RuntimeCommandError);
    expect(refused).toMatchObject({ name: 'RuntimeCommandError', code: 'invalid' });
  }, 60_000);
});
