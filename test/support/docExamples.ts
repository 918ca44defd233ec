/**
 * Runs the `@example` blocks of a module's doc comments as tests, so the docs
 * cannot drift from the behaviour (the doctest habit from Elixir and Oban).
 *
 * An example is plain TypeScript-flavoured JavaScript that may use any export
 * of the module. A line ending in `// => value` asserts deep equality of the
 * expression with `value`; a line ending in `// throws Name` asserts that the
 * expression throws an error whose `name` (or `code`) is `Name`. Other lines run
 * as statements, so examples can build values first.
 *
 * @example
 * ```ts
 * // in a test file:
 * import * as policy from '../../src/machines/adoptPolicy.js';
 * runDocExamples(new URL('../../src/machines/adoptPolicy.ts', import.meta.url), policy);
 * ```
 */
import { readFileSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import { transformSync } from 'esbuild';
import { describe, expect, it } from 'vitest';

export interface DocExample {
  /** The exported symbol whose doc comment holds the example. */
  symbol: string;
  /** 1-based line in the source file where the example starts. */
  line: number;
  code: string;
}

const DOC_BLOCK = /\/\*\*([\s\S]*?)\*\//g;

/** Extracts every `@example` block from a source text, tagged with the symbol it documents. */
export function extractDocExamples(source: string): DocExample[] {
  const examples: DocExample[] = [];
  for (const match of source.matchAll(DOC_BLOCK)) {
    const body = match[1] ?? '';
    const start = match.index ?? 0;
    const after = source.slice(start + match[0].length, start + match[0].length + 300);
    const symbol =
      /export\s+(?:async\s+)?(?:function\*?|const|class|let|type|interface)\s+([A-Za-z0-9_$]+)/.exec(
        after,
      )?.[1] ?? 'module';
    const lines = body.split('\n').map((l) => l.replace(/^\s*\* ?/, ''));
    const startLine = source.slice(0, start).split('\n').length;
    let inExample = false;
    let inFence = false;
    let current: string[] = [];
    let currentLine = 0;
    const flush = () => {
      if (current.join('').trim() !== '') {
        examples.push({ symbol, line: currentLine, code: current.join('\n') });
      }
      current = [];
    };
    lines.forEach((text, i) => {
      if (/^@\w+/.test(text.trim())) {
        if (inExample) flush();
        inExample = text.trim().startsWith('@example');
        inFence = false;
        currentLine = startLine + i;
        return;
      }
      if (!inExample) return;
      if (text.trim().startsWith('```')) {
        inFence = !inFence;
        return;
      }
      current.push(text);
    });
    if (inExample) flush();
  }
  return examples;
}

/** Rewrites `expr // => value` and `expr // throws Name` lines into checks. */
export function compileDocExample(code: string): string {
  const out: string[] = [];
  for (const raw of code.split('\n')) {
    const eq = /^(.*?);?\s*\/\/\s*=>\s*(.+)$/.exec(raw);
    const throws = /^(.*?);?\s*\/\/\s*throws\s+([A-Za-z0-9_]+)\s*$/.exec(raw);
    if (throws?.[1]?.trim()) {
      out.push(
        `__throws(() => (${throws[1]}), ${JSON.stringify(throws[2])}, ${JSON.stringify(raw.trim())});`,
      );
    } else if (eq?.[1]?.trim()) {
      out.push(`__equal((${eq[1]}), (${eq[2]}), ${JSON.stringify(raw.trim())});`);
    } else {
      out.push(raw);
    }
  }
  return out.join('\n');
}

function __equal(actual: unknown, expected: unknown, source: string): void {
  if (!isDeepStrictEqual(actual, expected)) {
    throw new Error(
      `doc example failed: ${source}\n  expected ${JSON.stringify(expected)}\n  got      ${JSON.stringify(actual)}`,
    );
  }
}

function __throws(fn: () => unknown, name: string, source: string): void {
  try {
    fn();
  } catch (error) {
    const e = error as { name?: string; code?: string };
    if (e.name === name || e.code === name) return;
    throw new Error(`doc example failed: ${source}\n  expected ${name}, got ${String(error)}`);
  }
  throw new Error(`doc example failed: ${source}\n  expected ${name}, nothing was thrown`);
}

/** Evaluates one example with the module's exports in scope. */
export async function runDocExample(
  example: DocExample,
  exports: Record<string, unknown>,
): Promise<void> {
  const compiled = compileDocExample(example.code);
  const js = transformSync(`(async () => {\n${compiled}\n})()`, { loader: 'ts' }).code;
  const names = Object.keys(exports).filter((n) => /^[A-Za-z_$][\w$]*$/.test(n));
  const fn = new Function('__equal', '__throws', ...names, `return ${js}`);
  await fn(__equal, __throws, ...names.map((n) => exports[n]));
}

/**
 * Declares one vitest test per `@example` in `file`, evaluated against
 * `exports`. Fails if the file has no examples at all, so a refactor that
 * drops them is noticed.
 */
export function runDocExamples(file: URL, exports: Record<string, unknown>): void {
  const examples = extractDocExamples(readFileSync(file, 'utf8'));
  const name = file.pathname.split('/').slice(-2).join('/');
  describe(`doc examples of ${name}`, () => {
    it('has at least one example', () => {
      expect(examples.length).toBeGreaterThan(0);
    });
    for (const example of examples) {
      it(`${example.symbol} (line ${example.line})`, async () => {
        await runDocExample(example, exports);
      });
    }
  });
}
