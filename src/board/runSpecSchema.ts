/**
 * The run spec of a task: which image, which argv, which environment. The
 * command is an argv array from start to finish; nothing here is ever joined
 * into a shell string. Limits keep one row (and one Docker API call) bounded.
 * Here, below the store and the HTTP API, so that every boundary that takes
 * a submission checks it by the same rules as the tick (src/db/runSpec.ts
 * parses it for the store).
 */

import { z } from 'zod';
import { ILL_FORMED, isWellFormed } from '../common/wellFormed.js';
import { refuseProtoKey } from './protoKey.js';

/** Limits on a run spec, documented in docs/data.md. */
export const RUN_SPEC_LIMITS = {
  imageLength: 255,
  commandArgs: 256,
  argLength: 8192,
  commandBytes: 65_536,
  envEntries: 128,
  envKeyLength: 128,
  envValueLength: 8192,
} as const;

const L = RUN_SPEC_LIMITS;
const noNul = (s: string) => !s.includes('\0');

/** The run spec's fields, for a schema that takes them flat (a submission: src/board/submission.ts). */
export const RUN_SPEC_FIELDS = {
  image: z
    .string()
    .min(1)
    .max(L.imageLength)
    .regex(/^[A-Za-z0-9][A-Za-z0-9._/:@-]*$/, 'image reference: no spaces or shell characters'),
  command: z
    .array(
      z
        .string()
        .max(L.argLength)
        .refine(noNul, 'NUL byte in argument')
        .refine(isWellFormed, ILL_FORMED),
    )
    .min(1)
    .max(L.commandArgs)
    .readonly()
    // Checked here, not first at start (wrapperArgv): the caller hears it, not the run.
    .refine((args) => args[0] !== '', { message: 'empty program name', path: [0] })
    .refine(
      (args) => args.reduce((n, a) => n + Buffer.byteLength(a) + 1, 0) <= L.commandBytes,
      `command longer than ${L.commandBytes} bytes`,
    ),
  // zod's record would drop an own __proto__ key unheard: refused by name (src/board/protoKey.ts).
  env: z
    .preprocess(refuseProtoKey('not a variable name a task can carry (__proto__)'), envRecord())
    .optional(),
};

function envRecord() {
  return z
    .record(
      z
        .string()
        .max(L.envKeyLength)
        .regex(
          /^[A-Za-z_][A-Za-z0-9_]*$/,
          'not an environment variable name ([A-Za-z_][A-Za-z0-9_]*)',
        ),
      z
        .string()
        .max(L.envValueLength)
        .refine(noNul, 'NUL byte in value')
        .refine(isWellFormed, ILL_FORMED),
    )
    .refine((env) => Object.keys(env).length <= L.envEntries, `more than ${L.envEntries} entries`);
}

/** zod schema of a run spec; unknown keys are rejected. */
export const runSpecSchema = z.strictObject(RUN_SPEC_FIELDS).readonly();

/** What a task runs. */
export type RunSpec = z.infer<typeof runSpecSchema>;
