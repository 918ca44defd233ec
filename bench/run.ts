/**
 * `npm run bench`: runs every benchmark in `bench/suites/` in one process, one
 * after another, and writes each one's results under `bench/results/`.
 */
import { readdirSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

const dir = new URL('./suites/', import.meta.url);
const only = process.argv.slice(2);
let files: string[] = [];
try {
  files = readdirSync(dir)
    .filter((f) => f.endsWith('.bench.ts'))
    .sort();
} catch {
  files = [];
}
// A name that is a suite's whole name picks that suite alone (`tick`, not
// also `tickAb`); any other picks every suite whose name contains it.
const base = (f: string) => f.replace(/\.bench\.ts$/, '');
if (only.length > 0)
  files = files.filter((f) =>
    only.some((o) => base(f) === o || (!files.some((g) => base(g) === o) && f.includes(o))),
  );
if (files.length === 0) {
  process.stdout.write('bench: no benchmark suites yet\n');
}
for (const file of files) {
  process.stdout.write(`\n== ${file}\n`);
  const mod = (await import(pathToFileURL(new URL(file, dir).pathname).href)) as {
    run?: () => Promise<void>;
  };
  if (typeof mod.run !== 'function') throw new Error(`bench: ${file} exports no run()`);
  await mod.run();
}
