/**
 * A namespace no other test file or run uses. Every suite that talks to a
 * shared engine builds its backends in one, so parallel vitest workers (and
 * a second checkout on the same engine) never list, re-pin or sweep each
 * other's runs.
 */
import { randomUUID } from 'node:crypto';
import { validateNamespace } from '../../src/containers/namespace.js';

/** `t-<tag>-<8 hex>`; `tag` is a short lowercase word naming the file. */
export function testNamespace(tag: string): string {
  return validateNamespace(`t-${tag}-${randomUUID().slice(0, 8)}`);
}
