/**
 * Ends `npm test` with what was skipped and why (the README's promise):
 * vitest's own summary shows only a count per file. A skipped suite's title
 * carries its reason by convention (`... (set ROUNDTABLE_TEST_DATABASE_URL
 * to run)`, `... skipped: <engine reason>`); a test skipped with
 * `ctx.skip(note)` carries it as its note. A skipped suite is listed once,
 * not test by test.
 */
import type { Reporter, TestCase, TestModule, TestSuite } from 'vitest/node';

type Line = { file: string; what: string; tests: number };

/** The skipped suites (outermost only) and loose skipped tests of one file. */
export function skippedIn(module: TestModule): Line[] {
  const file = module.relativeModuleId;
  const lines: Line[] = [];
  const visit = (children: Iterable<TestSuite | TestCase>) => {
    for (const child of children) {
      if (child.type === 'suite') {
        if (child.state() === 'skipped') {
          lines.push({ file, what: child.fullName, tests: [...child.children.allTests()].length });
        } else visit(child.children);
      } else {
        const result = child.result();
        if (result.state !== 'skipped') continue;
        const note = result.note;
        lines.push({ file, what: note ? `${child.fullName}: ${note}` : child.fullName, tests: 1 });
      }
    }
  };
  visit(module.children);
  return lines;
}

export default class SkippedReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const lines = modules.flatMap(skippedIn);
    if (lines.length === 0) return;
    const total = lines.reduce((n, l) => n + l.tests, 0);
    const out = [`\nSkipped (${total} tests), and why:`];
    for (const l of lines)
      out.push(`  ${l.file} › ${l.what} (${l.tests} test${l.tests === 1 ? '' : 's'})`);
    process.stdout.write(`${out.join('\n')}\n`);
  }
}
