/**
 * A command's failure as one log record, for `--log-format json` (or `auto`
 * off a terminal): a log shipper reads every line the CLI writes as JSON, so
 * no failure (a bad flag or config file, exit 2; a start that cannot come
 * up, exit 5; any command's) may end with a line of text.
 */
import { CliError, EXIT } from './exitCodes.js';

/** A failed command as one log record: its level, fields, message and exit code. */
export interface FailureRecord {
  level: 'error' | 'fatal';
  fields: Record<string, unknown>;
  message: string;
  exitCode: number;
}

/**
 * How a command's failure is logged under JSON logs: a `CliError` by its
 * stable `code` and `exitCode` (the node could not come up, exit 5, is
 * `fatal`, as a root that gave up is), anything else as an unexpected
 * failure (exit 1) with the error and its stack as `err`.
 *
 * @example
 * ```ts
 * failureRecord('start', new CliError('CLI_NODE', 'the board could not listen on 127.0.0.1:4100')) // => { level: 'fatal', fields: { command: 'start', code: 'CLI_NODE', exitCode: 5 }, message: 'the board could not listen on 127.0.0.1:4100', exitCode: 5 }
 * failureRecord('status', new CliError('CLI_STORE', 'the store did not answer')).level // => 'error'
 * failureRecord('start', new CliError('CLI_USAGE', 'unknown option --bogus')).fields // => { command: 'start', code: 'CLI_USAGE', exitCode: 2, help: 'roundtable start --help' }
 * failureRecord('show', new TypeError('boom')).fields.exitCode // => 1
 * failureRecord('show', new TypeError('boom')).message // => 'unexpected failure: boom'
 * ```
 */
export function failureRecord(command: string, error: unknown): FailureRecord {
  if (error instanceof CliError) {
    return {
      level: error.exitCode === EXIT.node ? 'fatal' : 'error',
      fields: {
        command,
        code: error.code,
        exitCode: error.exitCode,
        // What the text form's "see: roundtable <command> --help" says.
        ...(error.code === 'CLI_USAGE' ? { help: `roundtable ${command} --help` } : {}),
      },
      message: error.message,
      exitCode: error.exitCode,
    };
  }
  return {
    level: 'error',
    fields: { command, exitCode: EXIT.failure, err: error },
    message: `unexpected failure: ${error instanceof Error ? error.message : String(error)}`,
    exitCode: EXIT.failure,
  };
}
