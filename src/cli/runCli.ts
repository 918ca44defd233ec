/**
 * The CLI from argv to exit code, with the process behind `CliIo`: parse,
 * resolve the configuration, build the logger, run the command, and turn
 * every failure into one line and a documented exit code.
 */

import { didYouMean } from '../common/didYouMean.js';
import { cliDefaults } from './cliConfig.js';
import { createCliLogger, prettyLogs } from './cliLogger.js';
import type { CliIo } from './commandContext.js';
import { COMMANDS, commandHelp, flagSpecOf, generalHelp } from './commands.js';
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
  if (command === undefined) {
    const guess = didYouMean(
      name,
      COMMANDS.map((c) => c.name),
    );
    io.stderr.write(
      `roundtable: unknown command '${name}'${guess ? `; did you mean '${guess}'?` : ''}\n\n${generalHelp()}`,
    );
    return EXIT.usage;
  }
  const fail = (error: unknown): number => {
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
  // For `start` and `demo` the logs are the answer: under JSON logs their
  // failure is one record like every other line, not text a log shipper
  // cannot parse. Known once the configuration is.
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
    const out = command.logsToStdout ? io.stdout : io.stderr;
    const logger = createCliLogger({
      level: config.log.level,
      format: config.log.format,
      isTTY: out.isTTY,
      write: (line) => out.write(line),
    });
    failureAsRecord = command.logsToStdout && !prettyLogs(config.log.format, out.isTTY);
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
    return fail(error);
  }
  try {
    return await command.run(ctx);
  } catch (error) {
    ctx.logger.debug({ err: error }, 'command failed');
    if (!failureAsRecord) return fail(error);
    const { level, fields, message, exitCode } = failureRecord(name, error);
    ctx.logger[level](fields, message);
    return exitCode;
  }
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
