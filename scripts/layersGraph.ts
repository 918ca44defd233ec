/**
 * Draws the layers of src/ as dependency-cruiser finds them in the code: one
 * node per folder, in the order of `.dependency-cruiser.cjs`'s layer rules,
 * one arrow per folder that imports another, as a mermaid flowchart (no
 * counts, so the picture changes only when a layer starts or stops
 * importing another). `npm run layers:graph` writes it into
 * docs/architecture.md between the `layers:begin` and `layers:end` markers;
 * `npm run layers:graph -- --check` exits 1 when the picture there is stale
 * (test/scripts/layersGraph.test.ts runs the check).
 */
import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const CONFIG = join(ROOT, '.dependency-cruiser.cjs');
const DOC = join(ROOT, 'docs/architecture.md');
const BEGIN = '<!-- layers:begin (npm run layers:graph) -->';
const END = '<!-- layers:end -->';

/** What this script reads of dependency-cruiser's JSON output. */
export interface CruiseModules {
  modules: Array<{ source: string; dependencies: Array<{ resolved: string }> }>;
}

/** The layer names, top first, from the config's `layer-<name>` rules. */
export function layerOrder(config: { forbidden: Array<{ name: string }> }): string[] {
  return config.forbidden.filter((r) => r.name.startsWith('layer-')).map((r) => r.name.slice(6));
}

const layerOf = (path: string): string | null => /^src\/([^/]+)\//.exec(path)?.[1] ?? null;

/**
 * The mermaid flowchart of the imports between layers. Deterministic: nodes
 * and arrows in layer order, so a regenerated picture differs only where the
 * code does.
 *
 * @example
 * ```ts
 * const cruise = { modules: [{ source: 'src/a/x.ts', dependencies: [{ resolved: 'src/b/y.ts' }, { resolved: 'src/a/z.ts' }] }] }
 * renderLayers(cruise, ['a', 'b']) // => 'flowchart TD\n  a["src/a"]\n  b["src/b"]\n  a --> b'
 * ```
 */
export function renderLayers(cruise: CruiseModules, order: readonly string[]): string {
  const edges = new Set<string>();
  for (const m of cruise.modules) {
    const from = layerOf(m.source);
    if (from === null) continue;
    for (const d of m.dependencies) {
      const to = layerOf(d.resolved);
      if (to === null || to === from) continue;
      edges.add(`${from} ${to}`);
    }
  }
  const id = (layer: string): string => layer.replace(/-/g, '_');
  const lines = ['flowchart TD', ...order.map((l) => `  ${id(l)}["src/${l}"]`)];
  for (const from of order) {
    for (const to of order) {
      if (edges.has(`${from} ${to}`)) lines.push(`  ${id(from)} --> ${id(to)}`);
    }
  }
  return lines.join('\n');
}

/** Cruises src/ with the project's config (no rule checking: the lint does that). */
export async function cruiseSrc(cwd = ROOT, config = CONFIG): Promise<CruiseModules> {
  const bin = join(ROOT, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs');
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [bin, 'src', '--config', config, '--output-type', 'json'],
    { cwd, maxBuffer: 64 * 1024 * 1024 },
  );
  return JSON.parse(stdout) as CruiseModules;
}

/** The docs' block for a cruise of src/ (default: the code as it is now). */
export async function currentBlock(cruise?: CruiseModules): Promise<string> {
  const config = createRequire(import.meta.url)(CONFIG) as { forbidden: Array<{ name: string }> };
  const graph = renderLayers(cruise ?? (await cruiseSrc()), layerOrder(config));
  return `${BEGIN}\n\`\`\`mermaid\n${graph}\n\`\`\`\n${END}`;
}

/** docs/architecture.md with its block replaced by `block`. */
export function withBlock(doc: string, block: string): string {
  const a = doc.indexOf(BEGIN);
  const b = doc.indexOf(END);
  if (a < 0 || b < a) throw new Error(`docs/architecture.md has no ${BEGIN} ... ${END} block`);
  return doc.slice(0, a) + block + doc.slice(b + END.length);
}

async function main(): Promise<void> {
  const doc = await readFile(DOC, 'utf8');
  const next = withBlock(doc, await currentBlock());
  if (process.argv.includes('--check')) {
    if (next !== doc) {
      console.error('docs/architecture.md: the layers picture is stale; run npm run layers:graph');
      process.exitCode = 1;
    }
    return;
  }
  await writeFile(DOC, next);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
