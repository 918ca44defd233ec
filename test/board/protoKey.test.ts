/** The own `__proto__` key a parsed record may carry: refused by name wherever a user fills one. */
import { expect, it } from 'vitest';
import * as protoKey from '../../src/board/protoKey.js';
import { runSpecSchema } from '../../src/board/runSpecSchema.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/board/protoKey.ts', import.meta.url), protoKey);

it('a run spec still refuses env.__proto__ by name', () => {
  const spec = JSON.parse('{"image": "i", "command": ["c"], "env": {"__proto__": "x"}}');
  const parsed = runSpecSchema.safeParse(spec);
  expect(parsed.success).toBe(false);
  expect(parsed.error?.issues.map((i) => [i.path.join('.'), i.message])).toEqual([
    ['env.__proto__', 'not a variable name a task can carry (__proto__)'],
  ]);
});
