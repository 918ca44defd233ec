/**
 * A page script bundled from TypeScript by esbuild into memory, once per
 * process and shared by every server in it. The board and the inspector pages
 * both use it; each names its own entry and its own typed error.
 *
 * An installed package has no TypeScript sources: `npm run build`
 * (scripts/build.ts) bundles each page beforehand, next to where its entry
 * would be (`page/board.tsx` → `page/board.bundle.js`), and that file is served
 * as it is, so esbuild is needed only in a checkout.
 */
import { readFile } from 'node:fs/promises';
import { errorCode } from '../common/errorCode.js';

/** esbuild options of a page bundle, shared with the build so both serve the same script. */
export const PAGE_BUNDLE_OPTIONS = {
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: 'es2022',
  // The pages' .tsx files are Preact components (docs/board.md); said here as
  // well as in tsconfig.json so a build never depends on finding that file.
  jsx: 'automatic',
  jsxImportSource: 'preact',
  minify: true,
  legalComments: 'none',
} as const;

/** Where the build puts the bundle of `entry`. */
export function prebuiltBundleOf(entry: URL): URL {
  return new URL(entry.href.replace(/\.tsx?$/, '.bundle.js'));
}

async function bundle(entry: URL): Promise<string> {
  const prebuilt = await readFile(prebuiltBundleOf(entry), 'utf8').catch((e: unknown) => {
    if (errorCode(e) === 'ENOENT') return null;
    throw e;
  });
  if (prebuilt !== null) return prebuilt;
  const { build } = await import('esbuild');
  const result = await build({
    ...PAGE_BUNDLE_OPTIONS,
    entryPoints: [entry.pathname],
    write: false,
    logLevel: 'silent',
  });
  return result.outputFiles[0]!.text; // one entry point, write: false: one output file
}

/**
 * Returns a function that yields the bundled script of `entry`. The first call
 * builds it (or reads the prebuilt one); later calls share that build. A
 * failed build is not cached, so a retry rebuilds, and it rejects with
 * `wrapError(esbuildError)`.
 */
export function cachedBrowserBundle(
  entry: URL,
  wrapError: (cause: unknown) => Error,
): () => Promise<string> {
  let cached: Promise<string> | null = null;
  return () => {
    if (cached === null) {
      cached = bundle(entry).catch((err: unknown) => {
        cached = null;
        throw wrapError(err);
      });
    }
    return cached;
  };
}
