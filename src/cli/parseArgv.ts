/**
 * A small command-line parser: `--flag value`, `--flag=value`, boolean
 * switches, repeatable flags, and `--` before a command's own argv. Written
 * here rather than with `node:util` parseArgs so an unknown flag can be
 * answered with the flag that was probably meant. Pure.
 */
import { didYouMean } from '../common/didYouMean.js';
import { CliError } from './exitCodes.js';

/** What a command accepts: flags that take a value, switches that do not, and flags that may repeat. */
export interface FlagSpec {
  values: readonly string[];
  switches: readonly string[];
  repeatable?: readonly string[];
}

/** A parsed command line. Repeatable flags collect into arrays; a later single flag wins. */
export interface ParsedArgv {
  flags: Record<string, string | true | string[]>;
  /** Words that are not flags, before `--`. */
  positionals: string[];
  /** Everything after `--`, verbatim (a run's argv). */
  rest: string[];
}

const ALIASES: Record<string, string> = { '-h': '--help' };

/**
 * Parses the words after the command name.
 *
 * @example
 * ```ts
 * const spec = { values: ['--port', '--env'], switches: ['--json'], repeatable: ['--env'] }
 * parseArgv(['--port', '80', '--json'], spec).flags // => { '--port': '80', '--json': true }
 * parseArgv(['--port=80'], spec).flags // => { '--port': '80' }
 * parseArgv(['--env', 'A=1', '--env', 'B=2'], spec).flags // => { '--env': ['A=1', 'B=2'] }
 * parseArgv(['x', '--', 'echo', '--port'], spec).rest // => ['echo', '--port']
 * parseArgv(['x', '--', 'echo'], spec).positionals // => ['x']
 * parseArgv(['--prot', '80'], spec) // throws CliError
 * parseArgv(['--port'], spec) // throws CliError
 * parseArgv(['--port', '--', 'true'], spec) // throws CLI_USAGE
 * parseArgv(['--port=--', '--', 'true'], spec).flags // => { '--port': '--' }
 * parseArgv(['--json=yes'], spec) // throws CliError
 * ```
 */
export function parseArgv(argv: readonly string[], spec: FlagSpec): ParsedArgv {
  const flags: ParsedArgv['flags'] = {};
  const positionals: string[] = [];
  const known = [...spec.values, ...spec.switches];
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i]!; // i < argv.length
    if (word === '--') return { flags, positionals, rest: argv.slice(i + 1) };
    if (!word.startsWith('-') || word === '-') {
      positionals.push(word);
      continue;
    }
    const eq = word.indexOf('=');
    const name = ALIASES[word] ?? (eq > 0 ? word.slice(0, eq) : word);
    const inline = eq > 0 ? word.slice(eq + 1) : undefined;
    if (spec.switches.includes(name)) {
      if (inline !== undefined) throw usage(`${name} takes no value`);
      flags[name] = true;
      continue;
    }
    if (!spec.values.includes(name)) {
      const guess = didYouMean(name, known);
      throw usage(`unknown option ${name}${guess ? `; did you mean ${guess}?` : ''}`);
    }
    let value = inline;
    if (value === undefined) {
      const next = argv[i + 1];
      if (next === undefined || (next.startsWith('--') && next.length > 2)) {
        throw usage(`${name} needs a value`);
      }
      // `--` ends the options (the command follows): it is never an option's
      // value, or `--title -- echo hi` would take `--` as the title and then
      // refuse `echo` as a stray word. `--title=--` still gives that title.
      if (next === '--') {
        throw usage(
          `${name} needs a value (the -- after it starts the command; ${name}=-- for a literal --)`,
        );
      }
      value = next;
      i += 1;
    }
    if (spec.repeatable?.includes(name)) {
      const prior = flags[name];
      flags[name] = Array.isArray(prior) ? [...prior, value] : [value];
    } else {
      flags[name] = value;
    }
  }
  return { flags, positionals, rest: [] };
}

function usage(message: string): CliError {
  return new CliError('CLI_USAGE', message);
}
