/**
 * A dynamic supervisor's `startChild({ id, input })`: the template's spec with
 * a fresh id and the extra input merged over the template's, as the extra
 * arguments of Erlang's `simple_one_for_one`.
 */
import type { ChildSpec } from './childSpec.js';
import { ChildSpecError } from './errors.js';

/** Extra start arguments for a dynamic supervisor's template. */
export interface StartArgs {
  id?: string;
  input?: unknown;
}

/**
 * The spec to start: `specOrArgs` itself when it is a full spec, else the
 * template's with `args` applied; `seq` numbers generated ids.
 *
 * @example
 * ```ts
 * const logic = { transition: (s) => s, getInitialSnapshot: () => ({ status: 'active' }) }
 * const template = { id: 'runner', start: { logic, input: { a: 1, b: 1 } } }
 * fromTemplate(template, { input: { b: 2 } }, 7).id // => 'runner-7'
 * fromTemplate(template, { id: 'x', input: { b: 2 } }, 7).start.input // => { a: 1, b: 2 }
 * fromTemplate(undefined, { input: 1 }, 1) // throws ChildSpecError
 * ```
 */
export function fromTemplate(
  template: ChildSpec | undefined,
  specOrArgs: ChildSpec | StartArgs,
  seq: number,
): ChildSpec {
  if ('start' in specOrArgs) return specOrArgs;
  if (!template)
    throw new ChildSpecError('start', 'startChild needs a spec, or a supervisor template');
  const id = specOrArgs.id ?? `${template.id}-${seq}`;
  if (!('logic' in template.start)) return { ...template, id };
  const base = template.start.input;
  const extra = specOrArgs.input;
  const input =
    typeof base === 'object' && base !== null && typeof extra === 'object' && extra !== null
      ? { ...base, ...extra }
      : (extra ?? base);
  return { ...template, id, start: { logic: template.start.logic, input } };
}
