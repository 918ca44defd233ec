/**
 * Identifiers. Task and session ids are minted here: a type prefix and 32 hex
 * digits of a random UUID, so an id names its kind in logs and cannot be
 * guessed. Container and service names derive from session ids only, never
 * from user text, so nothing a user types reaches a Docker name.
 */
import { randomUUID } from 'node:crypto';
import { ValidationError } from './errors.js';

/** Id prefixes by entity. */
export const ID_PREFIX = { task: 'tsk', session: 'ses' } as const;

export type IdKind = keyof typeof ID_PREFIX;

const ID_PATTERN = { task: /^tsk_[0-9a-f]{32}$/, session: /^ses_[0-9a-f]{32}$/ } as const;

/** Users and nodes are named elsewhere (auth, deploy); we only bound their shape. */
const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:@-]{0,127}$/;

/** Mints a fresh id of the given kind. */
export function newId(kind: IdKind): string {
  return `${ID_PREFIX[kind]}_${randomUUID().replaceAll('-', '')}`;
}

/**
 * True when `value` is a well-formed id of that kind.
 *
 * @example
 * ```ts
 * isId('session', 'ses_0123456789abcdef0123456789abcdef') // => true
 * isId('task', 'ses_0123456789abcdef0123456789abcdef') // => false
 * isId('session', 'ses_0123') // => false
 * isId('session', 42) // => false
 * ```
 */
export function isId(kind: IdKind, value: unknown): value is string {
  return typeof value === 'string' && ID_PATTERN[kind].test(value);
}

/**
 * Returns `value` if it is an id of that kind, else throws a `ValidationError` naming `field`.
 *
 * @example
 * ```ts
 * assertId('task', 'tsk_0123456789abcdef0123456789abcdef', 'taskId') // => 'tsk_0123456789abcdef0123456789abcdef'
 * assertId('task', 'tsk_; rm -rf /', 'taskId') // throws ValidationError
 * ```
 */
export function assertId(kind: IdKind, value: unknown, field: string): string {
  if (!isId(kind, value)) throw new ValidationError(field, `not a ${kind} id`);
  return value;
}

/**
 * Returns `value` if it is an acceptable user or node name (1-128 characters:
 * letters, digits and `_ . : @ -`, not starting with punctuation).
 *
 * @example
 * ```ts
 * assertName('alice@example.com', 'userId') // => 'alice@example.com'
 * assertName('node-1', 'owner') // => 'node-1'
 * assertName('', 'userId') // throws ValidationError
 * assertName('bob smith', 'userId') // throws DB_VALIDATION
 * ```
 */
export function assertName(value: unknown, field: string): string {
  if (typeof value !== 'string' || !NAME_PATTERN.test(value)) {
    throw new ValidationError(field, 'expected 1-128 of [A-Za-z0-9_.:@-], starting alphanumeric');
  }
  return value;
}
