/**
 * A submission is checked at the boundaries (HTTP, runtime, CLI) by the
 * tick's own rules: the property holds the two to the same answer, and the
 * same field, for inputs full of the values that were refused late before
 * (lone surrogates, NUL, control characters, bad env names, blank titles).
 */
import fc from 'fast-check';
import { expect, it } from 'vitest';
import * as mod from '../../src/board/submission.js';
import { ValidationError } from '../../src/db/errors.js';
import { newId } from '../../src/db/ids.js';
import { validateTickOp } from '../../src/db/validateTickOp.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/board/submission.ts', import.meta.url), mod);

const tricky = fc.oneof(
  fc.constantFrom('', ' ', 'ok', 'a b', '\ud800', 'x\udc00', 'nul\0', 'tab\t', 'é', '😀', '\u007f'),
  fc.string({ maxLength: 6, unit: 'binary' }),
  fc.string({ maxLength: 6 }),
);
const envName = fc.oneof(fc.constantFrom('A', '_x', '1A', 'A B', 'PATH', ''), tricky);
const input = fc.record(
  {
    title: tricky,
    image: fc.oneof(fc.constantFrom('node:20', 'local', 'a b', ''), tricky),
    command: fc.array(tricky, { minLength: 0, maxLength: 3 }),
    env: fc.dictionary(envName, tricky, { maxKeys: 2 }),
    key: fc.oneof(fc.constantFrom('k-1', 'two words', ''), tricky),
    timeLimitMs: fc.constantFrom(1, 999, 1_000, 60_000, 1.5, -1),
  },
  { requiredKeys: ['title', 'image', 'command'] },
);

/** Where the tick carries each field of a submission. */
const TICK_FIELD: Record<string, string> = {
  title: 'title',
  image: 'spec.image',
  command: 'spec.command',
  env: 'spec.env',
  key: 'key',
  timeLimitMs: 'timeLimitMs',
};

it('refuses exactly what the tick refuses, naming the same field', () => {
  fc.assert(
    fc.property(input, (x) => {
      const problem = mod.submissionProblem(x);
      const { title, image, command, env, ...rest } = x;
      const op = {
        op: 'enqueue',
        ref: '1',
        taskId: newId('task'),
        sessionId: newId('session'),
        userId: 'alice',
        title,
        spec: { image, command, ...(env === undefined ? {} : { env }) },
        ...rest,
      };
      let tickField: string | null = null;
      try {
        validateTickOp(op, 0);
      } catch (e) {
        if (!(e instanceof ValidationError)) throw e;
        tickField = e.field;
      }
      expect(problem === null, JSON.stringify({ problem, tickField })).toBe(tickField === null);
      if (problem !== null && tickField !== null) {
        const [head, ...tail] = problem.field.split('.');
        const carried = [TICK_FIELD[head as string] ?? head, ...tail].join('.');
        // Both schemas list the fields in the same order, so the first bad one is the same.
        expect(tickField).toBe(`ops.0.${carried}`);
      }
    }),
    { numRuns: 2_000 },
  );
});
