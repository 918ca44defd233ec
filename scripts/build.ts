/**
 * `npm run build`: the package as an application installs it, in `dist/`.
 *
 * 1. `tsc -p tsconfig.build.json` emits ESM JavaScript, `.d.ts` and source
 *    maps for every module under src/ (the entry points `package.json`
 *    `exports` names among them; the CLI is `dist/cli/main.js`).
 * 2. The board and inspector page scripts, which a checkout bundles with
 *    esbuild in memory at server start, are bundled here once, next to where
 *    their sources would be (`page/board.bundle.js`): an installed package
 *    serves them without esbuild (src/ui-server/browserBundle.ts).
 *
 * A checkout never needs this: its tests, `npm start` and the examples run
 * on the .ts sources (the `roundtable-source` export condition, docs/library.md).
 *
 * `buildCli` is the older single-file bundle of the CLI, kept for the CLI's
 * end-to-end test, which runs the CLI as a plain node process.
 */
import { spawnSync } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build, type Plugin } from 'esbuild';
import { PAGE_BUNDLE_OPTIONS } from '../src/ui-server/browserBundle.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Page scripts served by the UI servers: source (under src/) → bundle (under dist/). */
export const PAGE_BUNDLES = [
  ['ui-server/page/board.tsx', 'ui-server/page/board.bundle.js'],
  ['ui-server/page/chartEngine.ts', 'ui-server/page/chartEngine.bundle.js'],
  ['ui-server/inspector/page/inspector.ts', 'ui-server/inspector/page/inspector.bundle.js'],
  ['ui-server/inspector/page/elkEngine.ts', 'ui-server/inspector/page/elkEngine.bundle.js'],
] as const;

const pinImportMetaUrl: Plugin = {
  name: 'pin-import-meta-url',
  setup(b) {
    b.onLoad({ filter: /[\\/]src[\\/].*\.ts$/ }, async (args) => {
      const source = await readFile(args.path, 'utf8');
      if (!source.includes('import.meta.url')) return undefined;
      return {
        contents: source.replaceAll(
          'import.meta.url',
          JSON.stringify(pathToFileURL(args.path).href),
        ),
        loader: 'ts',
      };
    });
  },
};

/** Bundles the CLI into one file (the e2e test's); resolves with the output path. */
export async function buildCli(outfile = join(ROOT, 'dist', 'roundtable.js')): Promise<string> {
  await build({
    entryPoints: [join(ROOT, 'src', 'cli', 'main.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    sourcemap: 'linked',
    logLevel: 'warning',
    plugins: [pinImportMetaUrl],
  });
  return outfile;
}

/** A failed build step, named. */
export class BuildError extends Error {
  override readonly name = 'BuildError';
  readonly code = 'BUILD_FAILED';
}

/** Builds the package into `outDir` (default dist/, emptied first); resolves with it. */
export async function buildPackage(outDir = join(ROOT, 'dist')): Promise<string> {
  await rm(outDir, { recursive: true, force: true });
  const tsc = spawnSync(
    process.execPath,
    [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'].concat(
      outDir === join(ROOT, 'dist') ? [] : ['--outDir', outDir],
    ),
    { cwd: ROOT, encoding: 'utf8', timeout: 600_000 },
  );
  if (tsc.status !== 0) {
    throw new BuildError(`tsc failed (${tsc.status ?? tsc.signal}):\n${tsc.stdout}${tsc.stderr}`);
  }
  await Promise.all(
    PAGE_BUNDLES.map(([source, bundle]) =>
      build({
        ...PAGE_BUNDLE_OPTIONS,
        entryPoints: [join(ROOT, 'src', source)],
        outfile: join(outDir, bundle),
        logLevel: 'warning',
      }),
    ),
  );
  return outDir;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const out = await buildPackage();
  process.stdout.write(`built ${out}\n`);
}
