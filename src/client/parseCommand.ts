/**
 * The create form's command line, split into argv the way a POSIX shell
 * splits words (quotes, backslashes), by `shell-quote` rather than a regular
 * expression. The run gets that argv directly, with no shell in between, so
 * anything only a shell can do (pipes, redirections, `&&`, globs) is refused
 * with a hint to wrap the line in `sh -c '…'`; `$VAR` stays literal text.
 * One known difference from a shell (shell-quote 1.12): inside double quotes
 * `\`` keeps its backslash; single quotes round-trip every string exactly.
 *
 * Imports nothing from `node:*`: the browser bundle includes this file.
 */
import { parse } from 'shell-quote';

/** Why a command line has no argv. */
export type CommandLineErrorCode = 'empty' | 'operator' | 'glob' | 'syntax';

/** The argv a line runs, or why it has none. */
export type ParsedCommand =
  | { ok: true; argv: string[] }
  | { ok: false; code: CommandLineErrorCode; message: string };

// A lookup that returns the reference itself keeps `$VAR` as typed: there is no shell to expand it.
function words(line: string) {
  return parse(line, (key) => `$${key}`);
}

/**
 * Splits `line` into argv.
 *
 * @example
 * ```ts
 * parseCommandLine('echo "hello world"') // => { ok: true, argv: ['echo', 'hello world'] }
 * parseCommandLine("sh -c 'echo a | tr a b'") // => { ok: true, argv: ['sh', '-c', 'echo a | tr a b'] }
 * parseCommandLine('printf %s\\ x $HOME') // => { ok: true, argv: ['printf', '%s x', '$HOME'] }
 * parseCommandLine('echo hi # a note') // => { ok: true, argv: ['echo', 'hi'] }
 * parseCommandLine('   ').code // => 'empty'
 * parseCommandLine('echo a | wc -c').code // => 'operator'
 * parseCommandLine('ls *.ts').code // => 'glob'
 * parseCommandLine('echo ${').code // => 'syntax'
 * ```
 */
export function parseCommandLine(line: string): ParsedCommand {
  let entries: ReturnType<typeof words>;
  try {
    entries = words(line);
  } catch (error) {
    // shell-quote throws on what no shell could read either (`${` unclosed):
    // the form shows why instead of the page's script failing.
    const why = error instanceof Error ? error.message : String(error);
    return {
      ok: false,
      code: 'syntax',
      message: `the line cannot be read as shell words (${why}): check its quotes and \${…}`,
    };
  }
  const argv: string[] = [];
  for (const entry of entries) {
    if (typeof entry === 'string') argv.push(entry);
    else if ('comment' in entry) break;
    else if (entry.op === 'glob') {
      return {
        ok: false,
        code: 'glob',
        message: `${entry.pattern} is a glob and no shell runs to expand it: quote it, or use sh -c '…'`,
      };
    } else {
      return {
        ok: false,
        code: 'operator',
        message: `${entry.op} needs a shell: write sh -c '…' around the line`,
      };
    }
  }
  if (argv.length === 0) return { ok: false, code: 'empty', message: 'the command is empty' };
  return { ok: true, argv };
}
