/**
 * The split between shared and isolated test files: the rule's examples,
 * and the split of this repository as the config makes it.
 */
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';
import { runDocExamples } from './docExamples.js';
import * as shared from './sharedProcessFiles.js';

runDocExamples(new URL('./sharedProcessFiles.ts', import.meta.url), shared);

test('pure suites share a process; a suite on a database, a server or the environment does not', () => {
  const root = fileURLToPath(new URL('../..', import.meta.url));
  const files = shared.pureTestFiles(root, ['test']);
  expect(files).toContain('test/supervisor/Supervisor.sync.test.ts');
  expect(files).toContain('test/machines/containerRun.test.ts');
  for (const io of [
    'test/db/tick.test.ts',
    'test/actors/runtime.timeLimit.test.ts',
    'test/cli/main.e2e.test.ts',
    'test/ui-server/page/boardPage.test.ts',
  ])
    expect(files).not.toContain(io);
});
