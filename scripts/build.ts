/**
 * Bundles the CLI into one file, `dist/roundtable.js` (`tsx scripts/build.ts`).
 * Packages stay external (PGlite loads its WASM next to its own module, so it
 * must run from node_modules), which makes the bundle a build of this
 * checkout, not a standalone artefact.
 *
 * Modules under src/ that find files next to themselves with
 * `new URL('./x', import.meta.url)` (the board page's source, bundled at
 * runtime) would look next to dist/roundtable.js instead; the plugin pins
 * `import.meta.url` in each of them to its source file's URL.
 */
import { readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build, type Plugin } from 'esbuild';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

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

/** Builds the CLI; resolves with the output path. */
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

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const out = await buildCli();
  process.stdout.write(`built ${out}\n`);
}
