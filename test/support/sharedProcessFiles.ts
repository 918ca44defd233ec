/**
 * Which test files may share a worker process with other files
 * (`isolate: false`, vitest.config.ts): the pure ones. On the 2-core CI
 * machine every isolated file imports its module graph again in a fresh
 * fork, ~0.7 s of CPU even for a file whose tests take milliseconds: the
 * 138 pure files took 90 s of wall time isolated and 17 s sharing
 * (docs/testing.md, "CI's time").
 *
 * A file is pure when its text names none of the things that touch the
 * process or the machine: a database, a server, a child process, a
 * browser, the file system, the environment, the network, a prototype
 * patch, a module mock or fake timers. Reading the file itself (not its
 * imports) errs the safe way: a helper added later that does I/O is named
 * in the file that imports it, which then runs isolated.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/** Words whose presence keeps a file isolated. */
const IMPURE =
  /databases|serverSuite|multiNode|chromium|child_process|createTestRuntime|createRuntime|migratedPglite|PGlite|pglite|node:net|node:http|startHarness|wsHarness|Docker|docker|privatePostgres|pgbouncer|runCli|vi\.mock|vi\.stubGlobal|vi\.stubEnv|useFakeTimers|vi\.spyOn|prototype|process\.env|process\.on|node:fs|tmpdir|clientHarness|fetch\(|WebSocket|listen\(/;

/**
 * Whether a test file's text says it can share a process.
 *
 * @example
 * ```ts
 * isPure("import { decide } from '../../src/actors/adoptPolicy.js';") // => true
 * isPure("import { describeEachEngine } from '../support/databases.js';") // => false
 * isPure("vi.mock('pg');") // => false
 * isPure('process.env.CI = "true";') // => false
 * ```
 */
export function isPure(text: string): boolean {
  return !IMPURE.test(text);
}

function testFilesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...testFilesUnder(path));
    else if (entry.name.endsWith('.test.ts')) out.push(path);
  }
  return out;
}

/** The pure test files under `dirs` (relative to `root`), as paths relative to `root`. */
export function pureTestFiles(root: string, dirs: readonly string[]): string[] {
  return dirs
    .flatMap((d) => testFilesUnder(join(root, d)))
    .filter((f) => isPure(readFileSync(f, 'utf8')))
    .map((f) => relative(root, f))
    .sort();
}
