/**
 * The CLI from argv to exit code, with the process behind `CliIo`: parse,
 * resolve the configuration, build the logger, run the command, and turn
 * every failure into one line and a documented exit code. Under JSON logs
 * that line is one log record (src/cli/failureRecord.ts), whichever command
 * failed and at whichever step, so a log shipper parses every line.
 */

import type { Logger } from 'pino';
import { didYouMean } from '../common/didYouMean.js';
import { cliDefaults } from './cliConfig.js';
import { createCliLogger, type LogFormat, prettyLogs } from './cliLogger.js';
import type { CliIo } from './commandContext.js';
import { COMMANDS, commandHelp, flagSpecOf, generalHelp } from './commands.js';
import { earlyLogFormat } from './earlyLogFormat.js';
import { CliError, ConfigError, EXIT } from './exitCodes.js';
import { failureRecord } from './failureRecord.js';
import { parseArgv } from './parseArgv.js';
import { resolveConfig } from './resolveConfig.js';

/** Runs one command line; resolves with the exit code. Never rejects. */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  const [name, ...words] = argv;
  if (name === undefined || name === 'help' || name === '--help' || name === '-h') {
    const about = COMMANDS.find((c) => c.name === words[0]);
    io.stdout.write(about ? commandHelp(about, cliDefaults()) : generalHelp());
    return EXIT.ok;
  }
  const command = COMMANDS.find((c) => c.name === name);
  // Where the command's logs go, and whether they are JSON lines as far as
  // the command line and environment say (the configuration is not read yet).
  const out = command?.logsToStdout === true ? io.stdout : io.stderr;
  const early = earlyLogFormat(words, io.env);
  const earlyLogger =
    early === null || prettyLogs(early, out.isTTY) ? null : jsonLogger(out, early);
  if (command === undefined) {
    const guess = didYouMean(
      name,
      COMMANDS.map((c) => c.name),
    );
    const message = `unknown command '${name}'${guess ? `; did you mean '${guess}'?` : ''}`;
    if (earlyLogger !== null) {
      const fields = {
        command: name,
        code: 'CLI_USAGE',
        exitCode: EXIT.usage,
        help: 'roundtable help',
      };
      earlyLogger.error(fields, message);
    } else io.stderr.write(`roundtable: ${message}\n\n${generalHelp()}`);
    return EXIT.usage;
  }
  const logFailure = (logger: Logger, error: unknown): number => {
    const { level, fields, message, exitCode } = failureRecord(name, error);
    logger[level](fields, message);
    return exitCode;
  };
  const text = (error: unknown): number => {
    if (error instanceof CliError) {
      io.stderr.write(`roundtable ${name}: ${error.message}\n`);
      if (error.exitCode === EXIT.usage && !(error instanceof ConfigError)) {
        io.stderr.write(`see: roundtable ${name} --help\n`);
      }
      return error.exitCode;
    }
    io.stderr.write(
      `roundtable ${name}: unexpected failure\n${(error as Error)?.stack ?? String(error)}\n`,
    );
    return EXIT.failure;
  };

  let ctx: Parameters<typeof command.run>[0];
  // Under JSON logs (as the configuration says) a failure is one record
  // like every other line, not text a log shipper cannot parse.
  let failureAsRecord = false;
  try {
    const parsed = parseArgv(words, flagSpecOf(command));
    if (parsed.flags['--help'] === true) {
      io.stdout.write(commandHelp(command, cliDefaults()));
      return EXIT.ok;
    }
    const named = command.takesTask === true ? 1 : 0;
    if (parsed.positionals.length > named) {
      throw new CliError('CLI_USAGE', `unexpected argument '${parsed.positionals[named]}'`);
    }
    if (parsed.positionals.length < named) {
      throw new CliError('CLI_USAGE', `name the task, e.g. roundtable ${name} tsk_...`);
    }
    const flagPath = parsed.flags['--config'];
    const filePath = typeof flagPath === 'string' ? flagPath : io.env.ROUNDTABLE_CONFIG;
    const fileSource = typeof flagPath === 'string' ? '--config' : 'ROUNDTABLE_CONFIG';
    const { config, warnings, origins } = resolveConfig({
      flags: parsed.flags,
      env: io.env,
      ...(command.commandDefaults ? { commandDefaults: command.commandDefaults } : {}),
      ...(filePath
        ? { file: { path: filePath, value: readJsonFile(io, filePath, fileSource) } }
        : {}),
    });
    const logger = createCliLogger({
      level: config.log.level,
      format: config.log.format,
      isTTY: out.isTTY,
      write: (line) => out.write(line),
    });
    failureAsRecord = !prettyLogs(config.log.format, out.isTTY);
    for (const warning of warnings) logger.warn(warning);
    ctx = {
      config,
      origins,
      flags: parsed.flags,
      positionals: parsed.positionals,
      rest: parsed.rest,
      logger,
      io,
      progress: {
        // A terminal that asked for JSON logs gets records, not a redrawn line.
        isTTY: out.isTTY && prettyLogs(config.log.format, out.isTTY),
        write: (text) => out.write(text),
        logger,
      },
    };
  } catch (error) {
    return earlyLogger === null ? text(error) : logFailure(earlyLogger, error);
  }
  try {
    return await command.run(ctx);
  } catch (error) {
    ctx.logger.debug({ err: error }, 'command failed');
    if (!failureAsRecord) return text(error);
    return logFailure(ctx.logger, error);
  }
}

/** The logger a failure found before the configuration is resolved is told to, as JSON lines. */
function jsonLogger(out: CliIo['stdout'], format: LogFormat): Logger {
  return createCliLogger({
    level: 'info',
    format,
    isTTY: out.isTTY,
    write: (line) => out.write(line),
  });
}

/** The configuration file's JSON; a failure names where its path came from (`--config` or `ROUNDTABLE_CONFIG`). */
function readJsonFile(io: CliIo, path: string, source: string): unknown {
  let text: string;
  try {
    text = io.readFile(path);
  } catch (error) {
    throw new ConfigError(path, source, `cannot be read: ${(error as Error).message}`);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new ConfigError(path, source, `is not JSON: ${(error as Error).message}`);
  }
}
