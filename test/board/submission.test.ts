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

it('a submission it accepts keeps every variable it was sent: none is dropped unheard', () => {
  // `{"env": {"__proto__": "x"}}` (JSON.parse makes the key its own) was
  // accepted with the variable gone: zod's record skips that key.
  const names = fc.oneof(fc.constantFrom('__proto__', 'constructor', 'A', 'PATH'), envName);
  fc.assert(
    fc.property(
      fc.uniqueArray(fc.tuple(names, fc.constantFrom('x', '1')), {
        selector: (p) => p[0],
        maxLength: 4,
      }),
      (pairs) => {
        // fromEntries defines each key, as JSON.parse does: `__proto__` is an own key.
        const env: Record<string, string> = Object.fromEntries(pairs);
        const parsed = mod.submissionSchema.safeParse({
          title: 't',
          image: 'local',
          command: ['true'],
          env,
        });
        if (parsed.success) {
          expect(Object.keys(parsed.data.env ?? {}).sort()).toEqual(Object.keys(env).sort());
        } else if (Object.hasOwn(env, '__proto__')) {
          expect(parsed.error.issues[0]?.path.join('.')).toMatch(/^env\./);
        }
      },
    ),
    { numRuns: 500 },
  );
  expect(
    mod.submissionProblem({
      title: 't',
      image: 'local',
      command: ['true'],
      env: JSON.parse('{"A": "1", "__proto__": "x"}'),
    }),
  ).toEqual({
    field: 'env.__proto__',
    message: 'not a variable name a task can carry (__proto__)',
  });
});
