/**
 * A page script bundled from TypeScript by esbuild into memory, once per
 * process and shared by every server in it. The board and the inspector pages
 * both use it; each names its own entry and its own typed error.
 */
import { build } from 'esbuild';

/**
 * Returns a function that yields the bundled script of `entry`. The first call
 * builds it; later calls share that build. A failed build is not cached, so a
 * retry rebuilds, and it rejects with `wrapError(esbuildError)`.
 */
export function cachedBrowserBundle(
  entry: URL,
  wrapError: (cause: unknown) => Error,
): () => Promise<string> {
  let cached: Promise<string> | null = null;
  return () => {
    if (cached === null) {
      cached = build({
        entryPoints: [entry.pathname],
        bundle: true,
        write: false,
        format: 'esm',
        platform: 'browser',
        target: 'es2022',
        // The pages' .tsx files are Preact components (docs/board.md); said here as
        // well as in tsconfig.json so a build never depends on finding that file.
        jsx: 'automatic',
        jsxImportSource: 'preact',
        minify: true,
        legalComments: 'none',
        logLevel: 'silent',
      }).then(
        (result) => result.outputFiles[0]!.text,
        (err: unknown) => {
          cached = null;
          throw wrapError(err);
        },
      );
    }
    return cached;
  };
}
