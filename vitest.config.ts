import { availableParallelism } from 'node:os';
import { defaultClientConditions, defaultServerConditions } from 'vite';
import { configDefaults, defineConfig } from 'vitest/config';
import { pureTestFiles } from './test/support/sharedProcessFiles.js';

// The repository's own tests import the package by name (`roundtable`,
// `roundtable/testing`, ...) and run on the .ts sources: the `roundtable-source` export
// condition (package.json) comes before `default`, which points at dist/.
const conditions = ['roundtable-source'];

// Pure files share worker processes (test/support/sharedProcessFiles.ts
// says which, and why); every other file gets a fresh one.
const INCLUDE = ['test/**/*.test.ts', 'examples/**/*.test.ts'];
const shared = pureTestFiles(import.meta.dirname, ['test']);

export default defineConfig({
  resolve: { conditions: [...conditions, ...defaultClientConditions] },
  ssr: { resolve: { conditions: [...conditions, ...defaultServerConditions] } },
  test: {
    // examples/: the suites docs/library.md shows an application writing, run as they are.
    projects: [
      { extends: true, test: { name: 'shared', include: shared, isolate: false } },
      {
        extends: true,
        test: {
          name: 'isolated',
          include: INCLUDE,
          exclude: [...configDefaults.exclude, ...shared],
        },
      },
    ],
    // The default output, then what was skipped and why, then the slowest files.
    reporters: [
      'default',
      './test/support/skippedReporter.ts',
      './test/support/slowestReporter.ts',
    ],
    // PGlite runs initdb per instance (3-5 s) and Docker suites talk to a real
    // engine; the default 5 s is too tight for those, never for pure tests.
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Vitest's default is one core fewer than the machine has: one fork on
    // the 2-core CI box, where most files wait on Postgres, Docker or
    // Chromium rather than on a core.
    maxWorkers: availableParallelism(),
  },
});
