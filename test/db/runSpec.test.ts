import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/db/errors.js';
import * as runSpec from '../../src/db/runSpec.js';
import { parseRunSpec, RUN_SPEC_LIMITS } from '../../src/db/runSpec.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/db/runSpec.ts', import.meta.url), runSpec);

function fieldOf(value: unknown): string {
  try {
    parseRunSpec(value);
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return (error as ValidationError).field;
  }
  throw new Error('expected a ValidationError');
}

describe('parseRunSpec', () => {
  it('names the offending field', () => {
    expect(fieldOf(null)).toBe('spec');
    expect(fieldOf({ command: ['x'] })).toBe('spec.image');
    expect(fieldOf({ image: 'a', command: ['ok', 'a\0b'] })).toBe('spec.command.1');
    expect(fieldOf({ image: 'a', command: ['x'], env: { A: 1 } })).toBe('spec.env.A');
    expect(fieldOf({ image: 'a', command: ['x'], env: { '1A': 'v' } })).toBe('spec.env.1A');
    expect(fieldOf({ image: 'a', command: ['x'], extra: 1 })).toBe('spec.extra');
    expect(fieldOf({ image: 'a', command: [''] })).toBe('spec.command.0');
    expect(fieldOf({ image: 'a', command: ['echo', '\udc00'] })).toBe('spec.command.1');
    expect(fieldOf({ image: 'a', command: ['x'], env: { A: '\ud83d' } })).toBe('spec.env.A');
  });

  it("says what an environment variable's name must be, not only that the key is invalid", () => {
    expect(() => parseRunSpec({ image: 'a', command: ['x'], env: { 'A=B': 'v' } })).toThrow(
      'invalid spec.env.A=B: not an environment variable name ([A-Za-z_][A-Za-z0-9_]*)',
    );
  });

  it('enforces every limit', () => {
    const L = RUN_SPEC_LIMITS;
    const ok = { image: 'node:20', command: ['true'] };
    expect(fieldOf({ ...ok, image: 'a'.repeat(L.imageLength + 1) })).toBe('spec.image');
    expect(fieldOf({ ...ok, command: Array(L.commandArgs + 1).fill('x') })).toBe('spec.command');
    expect(fieldOf({ ...ok, command: ['x'.repeat(L.argLength + 1)] })).toBe('spec.command.0');
    expect(fieldOf({ ...ok, command: Array(9).fill('x'.repeat(8000)) })).toBe('spec.command');
    const env = Object.fromEntries(
      Array.from({ length: L.envEntries + 1 }, (_, n) => [`K${n}`, 'v']),
    );
    expect(fieldOf({ ...ok, env })).toBe('spec.env');
    expect(fieldOf({ ...ok, env: { K: 'v'.repeat(L.envValueLength + 1) } })).toBe('spec.env.K');
  });

  test.prop([
    fc.constantFrom('node:20', 'ghcr.io/acme/agent@sha256:abc', 'busybox'),
    fc
      .array(
        fc.string({ maxLength: 40 }).filter((s) => !s.includes('\0')),
        {
          minLength: 1,
          maxLength: 8,
        },
      )
      .filter((args) => args[0] !== ''),
    fc.dictionary(fc.stringMatching(/^[A-Z_][A-Z0-9_]{0,10}$/), fc.string({ maxLength: 20 })),
  ])('keeps argv as given, shell characters included, never joined', (image, command, env) => {
    const spec = parseRunSpec({ image, command, env });
    expect(spec.command).toEqual(command);
    expect(spec.env).toEqual(env);
  });
});
