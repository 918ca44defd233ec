/**
 * A new in-memory PGlite that already has roundtable's schema, for test
 * suites: `createTestRuntime` opens one when it is given no store, and a
 * suite that shares one PGlite per file opens it with this.
 *
 * A fresh PGlite runs initdb, 2-4 s on an idle 2-core machine and 3-15 s on
 * a busy one; loading a dump of an initialized, migrated data directory
 * takes under a second. The first instance a process asks for builds that
 * dump (or reads it from the temp dir, where the first process of a test run
 * wrote it), and every later one loads it. The file is keyed by the
 * migrations and the PGlite build, so a new migration or an upgraded PGlite
 * never loads a stale schema, and it is written atomically (a temp name,
 * then a rename), so processes starting at once never read half a file.
 */
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { connect } from '../db/connect.js';
import { MIGRATIONS, migrate } from '../db/migrations.js';

/** Where a process keeps its template: the dump's bytes, once known. */
let template: Promise<Blob> | undefined;

/** The PGlite build: its wasm's size and time, which an upgrade changes. */
function pgliteBuild(): string {
  const wasm = createRequire(import.meta.url).resolve('@electric-sql/pglite/pglite.wasm');
  const { size, mtimeMs } = statSync(wasm);
  return `${size}:${mtimeMs}`;
}

/**
 * The template's file in the temp dir.
 *
 * @example
 * ```ts
 * templateFile('/tmp', 'abc') // => '/tmp/roundtable-pglite-abc.tar.gz'
 * ```
 */
export function templateFile(dir: string, key: string): string {
  return join(dir, `roundtable-pglite-${key}.tar.gz`);
}

/** The template's key: a new migration, or another PGlite build, is another template. */
export function templateKey(build: string, migrations: readonly unknown[]): string {
  return createHash('sha256')
    .update(build)
    .update(JSON.stringify(migrations))
    .digest('hex')
    .slice(0, 16);
}

/** This PGlite's and these migrations' template file (it may not exist yet). */
export function templatePath(): string {
  return templateFile(tmpdir(), templateKey(pgliteBuild(), MIGRATIONS));
}

async function migratedFresh(): Promise<PGlite> {
  const fresh = await PGlite.create('memory://');
  const handle = await connect({ pglite: fresh });
  await migrate(handle.db);
  await handle.close();
  return fresh;
}

/** Reads the template file, or builds it; `fresh` is the instance built, if one was. */
async function loadTemplate(): Promise<{ dump: Blob; fresh?: PGlite }> {
  const file = templatePath();
  try {
    return { dump: new Blob([readFileSync(file)]) };
  } catch {
    // No template yet (or unreadable): build one below.
  }
  const fresh = await migratedFresh();
  // Compressed: ~5 MB on disk and in memory instead of ~41, and as quick to load.
  const dump = await fresh.dumpDataDir('gzip');
  const partial = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  try {
    writeFileSync(partial, Buffer.from(await dump.arrayBuffer()));
    renameSync(partial, file);
  } catch {
    // A temp dir we cannot write to only costs the next process its initdb.
    rmSync(partial, { force: true });
  }
  return { dump, fresh };
}

/**
 * A new in-memory PGlite with every migration applied; the caller closes it.
 * A suite sharing one per file opens it in `beforeAll` and passes it to each
 * `createTestRuntime({ pglite })`, which empties its tables first.
 */
export async function migratedPglite(): Promise<PGlite> {
  if (template === undefined) {
    const loading = loadTemplate();
    template = loading.then((t) => t.dump);
    // A failed build is not cached: the next caller tries again.
    template.catch(() => {
      template = undefined;
    });
    const first = await loading;
    if (first.fresh !== undefined) return first.fresh;
  }
  return PGlite.create('memory://', { loadDataDir: await template });
}
