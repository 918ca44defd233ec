/**
 * What a caller may submit as a task, checked the same way at every boundary
 * that takes one (the HTTP API, the runtime's `submit`, the CLI) and once
 * more by the tick: the title, the run spec's fields (src/board/runSpecSchema.ts),
 * the idempotency key and the time limit. A refusal names the field as the
 * caller sent it (`env.A`), not as the tick carries it.
 */
import { z } from 'zod';
import { firstIssue } from '../common/firstIssue.js';
import { ILL_FORMED, isWellFormed } from '../common/wellFormed.js';
import { RUN_SPEC_FIELDS } from './runSpecSchema.js';
import { submitKey } from './submitKey.js';
import { timeLimitMs } from './timeLimit.js';

/** A title's length in UTF-16 units at most (docs/data.md). */
export const TITLE_MAX = 200;

/**
 * A control character, which a title may not hold: one rule for the schema,
 * the tick's hand-written check (src/db/tickFastCheck.ts) and the CLI's
 * title made of an argv.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: rejecting control characters is the point
export const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;

/** A task's title: 1-200 units, not blank, no control character, well-formed. */
export const taskTitle = z
  .string()
  .min(1)
  .max(TITLE_MAX)
  .refine((s) => s.trim() !== '', 'blank')
  .refine((s) => !CONTROL_CHARACTER.test(s), 'control character')
  .refine(isWellFormed, ILL_FORMED);

/** A submission (`CreateTaskInput`); unknown keys are refused. */
export const submissionSchema = z.strictObject({
  title: taskTitle,
  ...RUN_SPEC_FIELDS,
  key: submitKey.optional(),
  timeLimitMs: timeLimitMs.optional(),
});

/** Why a submission is refused: the field as sent, and what is wrong with it. */
export interface SubmissionProblem {
  field: string;
  message: string;
}

/**
 * The first problem of a submission, or null when it may be queued.
 *
 * @example
 * ```ts
 * submissionProblem({ title: 'build', image: 'node:20', command: ['npm', 'test'] }) // => null
 * submissionProblem({ title: 'build', image: 'node:20', command: ['true'], env: { '1A': 'x' } }) // => { field: 'env.1A', message: 'not an environment variable name ([A-Za-z_][A-Za-z0-9_]*)' }
 * submissionProblem({ title: 'build', image: 'node:20', command: ['true'], env: { A: '\ud800' } })?.field // => 'env.A'
 * submissionProblem({ title: ' ', image: 'node:20', command: ['true'] }) // => { field: 'title', message: 'blank' }
 * submissionProblem({ title: 'x', image: 'node:20', command: [''] })?.field // => 'command.0'
 * submissionProblem({ title: 'x', image: 'node:20', command: ['true'], shell: true })?.field // => 'shell'
 * ```
 */
export function submissionProblem(input: unknown): SubmissionProblem | null {
  const result = submissionSchema.safeParse(input);
  if (result.success) return null;
  return firstIssue(result.error, '');
}
