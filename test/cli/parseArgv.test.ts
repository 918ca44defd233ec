import { expect, it } from 'vitest';
import { CliError } from '../../src/cli/exitCodes.js';
import { parseArgv } from '../../src/cli/parseArgv.js';

const spec = { values: ['--title', '--time-limit'], switches: ['--json'] };

const refusal = (argv: string[]) => {
  try {
    parseArgv(argv, spec);
  } catch (error) {
    expect(error).toBeInstanceOf(CliError);
    return (error as CliError).message;
  }
  throw new Error('expected a refusal');
};

it('never takes the -- that starts the command as an option value', () => {
  expect(refusal(['--time-limit', '--', 'true'])).toMatch(/^--time-limit needs a value/);
  expect(refusal(['--title', '--', 'echo', 'hi'])).toMatch(/^--title needs a value/);
  expect(refusal(['--json', '--title', '--'])).toMatch(/^--title needs a value/);
});

it('takes -- as a value only when written inline, and keeps the command after it', () => {
  expect(parseArgv(['--title=--', '--', 'echo', 'hi'], spec)).toEqual({
    flags: { '--title': '--' },
    positionals: [],
    rest: ['echo', 'hi'],
  });
  // A value that merely starts with one dash is a value.
  expect(parseArgv(['--title', '-x', '--', 'true'], spec).flags).toEqual({ '--title': '-x' });
});
