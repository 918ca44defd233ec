/**
 * What every command receives: the resolved configuration, the parsed
 * command line, a logger, and the process's I/O behind a small interface so
 * tests can run a command in-process and read what it printed.
 */
import type { Logger } from 'pino';
import type { CliConfig } from './cliConfig.js';
import type { ProgressOptions } from './withProgress.js';

export interface CliOutput {
  /** Text, or bytes written as they are (`logs` writes a run's stored output without decoding it). */
  write(text: string | Uint8Array): void;
  readonly isTTY: boolean;
}

export interface CliIo {
  env: Record<string, string | undefined>;
  stdout: CliOutput;
  stderr: CliOutput;
  readFile(path: string): string;
  /** Calls `handler` on every SIGINT or SIGTERM until the returned function is called. */
  onSignal(handler: (signal: 'SIGINT' | 'SIGTERM') => void): () => void;
  /** Ends the process now (a second Ctrl-C, a stop past its deadline). */
  exit(code: number): void;
}

export interface CommandContext {
  config: CliConfig;
  /** Where each setting came from (`--backend`, `ROUNDTABLE_BACKEND`, `default`), for messages. */
  origins?: Record<string, string>;
  flags: Record<string, string | true | string[]>;
  positionals: string[];
  rest: string[];
  logger: Logger;
  io: CliIo;
  progress: ProgressOptions;
}
