import { afterEach, describe, expect, it } from 'vitest';
import type { Runtime } from '../../src/actors/runtimeTypes.js';
import { createTestRuntime, type TestRuntime } from '../../src/testing/index.js';

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
