/**
 * The package as an application gets it (`npm run check:package`, and a CI
 * step, scripts/ci/40-package.sh): `npm pack` (which builds dist/ first), the
 * tarball installed into a fresh temporary app with no dev tooling, and a
 * plain `.mjs` program (examples/first-jobs.mjs: every entry point, two jobs
 * on PGlite in memory and the local backend) run there with `node`; then the
 * installed CLI's `--help`. Prints the figures: tarball and install sizes,
 * install time, and the program's time to its first job.
 *
 * A script, not a vitest file: it installs from the registry (or npm's cache)
 * and builds, which takes tens of seconds, where the test suite runs in
 * milliseconds per test and never touches the network.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/** A step that did not do what a newcomer would expect, with its output. */
export class PackCheckError extends Error {
  override readonly name = 'PackCheckError';
  readonly code = 'PACK_CHECK_FAILED';
}

function run(cmd: string, args: string[], cwd: string, timeoutMs: number) {
  const started = performance.now();
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', timeout: timeoutMs, env: cleanEnv() });
  const ms = Math.round(performance.now() - started);
  if (r.status !== 0) {
    throw new PackCheckError(
      `${cmd} ${args.join(' ')} in ${cwd} failed (${r.status ?? r.signal}) after ${ms} ms:\n${r.stdout}${r.stderr}`,
    );
  }
  return { stdout: r.stdout, stderr: r.stderr, ms };
}

/** The app sees no variable of this checkout's tooling (NODE_OPTIONS with tsx, vitest's). */
function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const k of ['PATH', 'HOME', 'TMPDIR', 'LANG', 'npm_config_cache', 'npm_config_registry'])
    if (process.env[k] !== undefined) env[k] = process.env[k];
  return env;
}

function kib(path: string): number {
  return Number(execFileSync('du', ['-sk', path], { encoding: 'utf8' }).split('\t')[0]);
}

export interface PackFigures {
  tarballKiB: number;
  unpackedKiB: number;
  installKiB: number;
  installMs: number;
  firstJobMs: number;
  bothJobsMs: number;
  files: number;
}

/** Packs, installs and runs; resolves with the figures, throws PackCheckError on the first failure. */
export function checkPackage(): PackFigures {
  const work = mkdtempSync(join(tmpdir(), 'roundtable-pack-'));
  try {
    const packed = run(NPM, ['pack', '--json', '--pack-destination', work], ROOT, 900_000);
    const info = (
      JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as Array<{
        filename: string;
        size: number;
        unpackedSize: number;
        entryCount: number;
      }>
    )[0]!;
    const tarball = join(work, info.filename);
    const app = join(work, 'app');
    run('mkdir', ['-p', app], work, 10_000);
    writeFileSync(
      join(app, 'package.json'),
      `${JSON.stringify({ name: 'newcomer-app', private: true, type: 'module', dependencies: { roundtable: `file:${tarball}` } }, null, 2)}\n`,
    );
    const installed = run(
      NPM,
      ['install', '--no-audit', '--no-fund', '--prefer-offline'],
      app,
      600_000,
    );
    for (const dev of ['typescript', 'tsx', 'vitest', 'esbuild']) {
      if (statSync(join(app, 'node_modules', dev), { throwIfNoEntry: false })) {
        throw new PackCheckError(`the install pulled in ${dev}: it must stay a dev dependency`);
      }
    }
    copyFileSync(join(ROOT, 'examples', 'first-jobs.mjs'), join(app, 'app.mjs'));
    const program = run(process.execPath, ['app.mjs'], app, 300_000);
    for (const expected of ['greet: done, exit 0', 'count: done, exit 0', 'entry points: client']) {
      if (!program.stdout.includes(expected)) {
        throw new PackCheckError(
          `app.mjs did not print "${expected}":\n${program.stdout}${program.stderr}`,
        );
      }
    }
    const help = run(join(app, 'node_modules', '.bin', 'roundtable'), ['--help'], app, 120_000);
    if (!help.stdout.includes('roundtable')) {
      throw new PackCheckError(`roundtable --help printed no help:\n${help.stdout}${help.stderr}`);
    }
    const timing = /first job done (\d+) ms after the process started, both (\d+) ms/.exec(
      program.stdout,
    );
    return {
      tarballKiB: Math.round(info.size / 1024),
      unpackedKiB: Math.round(info.unpackedSize / 1024),
      installKiB: kib(join(app, 'node_modules')),
      installMs: installed.ms,
      firstJobMs: Number(timing?.[1] ?? Number.NaN),
      bothJobsMs: Number(timing?.[2] ?? Number.NaN),
      files: info.entryCount,
    };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const f = checkPackage();
  process.stdout.write(
    [
      'package check: the packed tarball installs and runs as a newcomer uses it',
      `  tarball ${f.tarballKiB} KiB (${f.files} files, ${f.unpackedKiB} KiB unpacked)`,
      `  npm install in a fresh app: ${f.installMs} ms, node_modules ${f.installKiB} KiB`,
      `  node app.mjs: first job done ${f.firstJobMs} ms after the process started, both ${f.bothJobsMs} ms`,
      '',
    ].join('\n'),
  );
}
