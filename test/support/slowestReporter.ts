/**
 * Ends `npm test` with the files that took longest (tests, hooks and the
 * import together), so the CI log says where its 20-minute budget goes and
 * which suite to trim when a new one is added. vitest's own lines show a
 * file's duration only while it runs, and CI logs are read from the end.
 */
import type { Reporter, TestModule } from 'vitest/node';

/** How many files the list shows. */
const SHOWN = 15;

/** Seconds a file held a worker: its import, setup and tests. */
export function secondsOf(module: TestModule): number {
  const d = module.diagnostic();
  return (d.collectDuration + d.setupDuration + d.duration) / 1000;
}

/**
 * The `limit` slowest files, slowest first, as `seconds file` lines.
 *
 * @example
 * ```ts
 * slowestLines([['a.test.ts', 1.25], ['b.test.ts', 30]], 1) // => ['  30.0 s  b.test.ts']
 * ```
 */
export function slowestLines(files: ReadonlyArray<[string, number]>, limit: number): string[] {
  return [...files]
    .sort((a, b) => b[1] - a[1])
    .slice(0, limit)
    .map(([file, s]) => `${s.toFixed(1).padStart(6)} s  ${file}`);
}

export default class SlowestReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    if (modules.length < SHOWN) return;
    const files = modules.map((m): [string, number] => [m.relativeModuleId, secondsOf(m)]);
    const total = files.reduce((n, [, s]) => n + s, 0);
    const out = [`\nSlowest ${SHOWN} files (of ${total.toFixed(0)} worker-seconds in all):`];
    out.push(...slowestLines(files, SHOWN));
    process.stdout.write(`${out.join('\n')}\n`);
  }
}
