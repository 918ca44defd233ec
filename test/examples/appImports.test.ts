/**
 * The examples are an application's files (docs/library.md): they may import
 * only what such an app installs, roundtable and the tools it names (vitest,
 * fast-check), never roundtable's own dependencies. Under a strict install
 * (pnpm, npm's --install-strategy=nested) those do not resolve from the app:
 * examples/app-tests imported @electric-sql/pglite and failed there with
 * ERR_MODULE_NOT_FOUND.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../examples/', import.meta.url));
const APP_DEPENDENCIES = /^(node:|\.{1,2}\/|roundtable(\/|$)|vitest$|fast-check$)/;

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? files(join(dir, e.name))
      : /\.(m?js|ts)$/.test(e.name)
        ? [join(dir, e.name)]
        : [],
  );
}

/** The specifiers of a file's static and dynamic imports. */
function importsOf(text: string): string[] {
  const found = text.matchAll(/(?:\bfrom\s+|\bimport\s*\(?\s*)['"]([^'"]+)['"]/g);
  return [...found].map((m) => m[1] ?? '');
}

describe('the examples import only what an application installs', () => {
  it('reads imports of every form', () => {
    expect(
      importsOf(
        "import a from 'x';\nimport { b } from \"y\";\nimport 'z';\nconst m = await import('w');\nimport type { T } from 'v';",
      ),
    ).toEqual(['x', 'y', 'z', 'w', 'v']);
  });

  for (const file of files(ROOT)) {
    it(file.slice(ROOT.length), () => {
      const outside = importsOf(readFileSync(file, 'utf8')).filter(
        (s) => !APP_DEPENDENCIES.test(s),
      );
      expect(outside).toEqual([]);
    });
  }
});
