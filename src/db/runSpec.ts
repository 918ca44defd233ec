/**
 * The run spec as the store parses it: the schema (src/board/runSpecSchema.ts)
 * with the store's typed error naming the field.
 */
import { type RunSpec, runSpecSchema } from '../board/runSpecSchema.js';
import { parseOrThrow } from './parseOrThrow.js';

export { RUN_SPEC_LIMITS, type RunSpec, runSpecSchema } from '../board/runSpecSchema.js';

/**
 * Validates a run spec, throwing a `ValidationError` whose `field` names the
 * offending part under `field` (e.g. `spec.command`).
 *
 * @example
 * ```ts
 * parseRunSpec({ image: 'node:20', command: ['npm', 'test'] }) // => { image: 'node:20', command: ['npm', 'test'] }
 * parseRunSpec({ image: 'node:20', command: 'npm test' }) // throws ValidationError
 * parseRunSpec({ image: 'node:20; rm -rf /', command: ['true'] }) // throws ValidationError
 * parseRunSpec({ image: 'node:20', command: [] }) // throws DB_VALIDATION
 * parseRunSpec({ image: 'node:20', command: [''] }) // throws ValidationError
 * parseRunSpec({ image: 'node:20', command: ['echo', ''] }).command // => ['echo', '']
 * parseRunSpec({ image: 'node:20', command: ['echo', '\udc00'] }) // throws ValidationError
 * parseRunSpec({ image: 'node:20', command: ['x'], env: { 'A B': '1' } }) // throws ValidationError
 * parseRunSpec({ image: 'node:20', command: ['x'], shell: true }) // throws ValidationError
 * ```
 */
export function parseRunSpec(value: unknown, field = 'spec'): RunSpec {
  return parseOrThrow(runSpecSchema, value, field);
}
