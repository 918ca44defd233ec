/**
 * A JSON object's own `__proto__` key: `JSON.parse` makes one (an object
 * literal or an assignment sets the prototype instead), and zod's record
 * skips it, so a record holding one was accepted and the key dropped
 * unheard. Every record a user fills (a task's `env`, a configuration's
 * `tokens.users`) refuses it by name instead. `constructor`, `toString`
 * and the like are plain own keys of a parsed object and stay allowed.
 */
import type { z } from 'zod';

/**
 * Whether `raw` is an object with an own `__proto__` key.
 *
 * @example
 * ```ts
 * hasOwnProtoKey(JSON.parse('{"__proto__": "x"}')) // => true
 * hasOwnProtoKey(JSON.parse('{"constructor": "x"}')) // => false
 * hasOwnProtoKey({}) // => false
 * hasOwnProtoKey('__proto__') // => false
 * ```
 */
export function hasOwnProtoKey(raw: unknown): boolean {
  return typeof raw === 'object' && raw !== null && Object.hasOwn(raw, '__proto__');
}

/**
 * A zod `preprocess` step that adds an issue at `<path>.__proto__` saying
 * `problem` when the record has an own `__proto__` key (and passes the
 * value on unchanged).
 *
 * @example
 * ```ts
 * const refuse = refuseProtoKey('not a user name (__proto__)');
 * const issues = [];
 * refuse(JSON.parse('{"__proto__": "x"}'), { addIssue: (i) => issues.push(i) });
 * issues // => [{ code: 'custom', message: 'not a user name (__proto__)', path: ['__proto__'] }]
 * ```
 */
export function refuseProtoKey(problem: string) {
  return (raw: unknown, ctx: Pick<z.RefinementCtx, 'addIssue'>): unknown => {
    if (hasOwnProtoKey(raw))
      ctx.addIssue({ code: 'custom', message: problem, path: ['__proto__'] });
    return raw;
  };
}
