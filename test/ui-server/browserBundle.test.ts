import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { cachedBrowserBundle } from '../../src/ui-server/browserBundle.js';

class WrappedError extends Error {
  readonly code = 'WRAPPED';
}

describe('cachedBrowserBundle', () => {
  it('builds once and shares the build; a failed build is wrapped, not cached, and retried', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rt-bundle-'));
    try {
      const entry = pathToFileURL(join(dir, 'page.ts'));
      const script = cachedBrowserBundle(entry, (cause) => new WrappedError('failed', { cause }));

      const failed = await script().catch((e: unknown) => e);
      expect(failed).toBeInstanceOf(WrappedError);
      expect((failed as WrappedError).cause).toBeDefined();

      writeFileSync(entry, 'const n: number = 41; document.title = String(n + 1);\n');
      const first = script();
      expect(script()).toBe(first);
      const text = await first;
      expect(text).toContain('document.title');
      expect(text).not.toContain(': number');
    } finally {
      // Every run left its directory in /tmp.
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
