/**
 * The CLI's exit codes, one place, documented in docs/operations.md. Scripts
 * branch on them, so a number never changes meaning.
 */
import { describeRuntimeExit, type RuntimeExit } from '../actors/runtimeTypes.js';

export const EXIT = {
  /** Done; also a clean stop after SIGINT or SIGTERM. */
  ok: 0,
  /** Something failed that has no code of its own (a bug, or an I/O error we did not expect). */
  failure: 1,
  /** Bad command line or configuration: nothing was started. */
  usage: 2,
  /** The store could not be opened, reached or migrated. */
  store: 3,
  /** The PGlite data directory is held by another running node. */
  inUse: 4,
  /** The node could not come up (UI port taken, container engine unreachable) or its tree gave up. */
  node: 5,
  /** A stop did not finish within `shutdownMs`; the process was ended anyway. */
  stopTimeout: 6,
  /** The task a command named does not exist. */
  notFound: 7,
  /** The task is not in a state the command applies to (cancel a finished one, retry one that neither failed nor was cancelled). */
  conflict: 8,
  /** The attempt `logs` named has no stored output: still queued, running, or ended without reading any. */
  noOutput: 9,
  /** A second Ctrl-C while stopping: ended at once, without waiting. */
  interrupted: 130,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** Stable codes of the CLI's own errors. */
export type CliErrorCode =
  | 'CLI_USAGE'
  | 'CLI_CONFIG'
  | 'CLI_STORE'
  | 'CLI_IN_USE'
  | 'CLI_NODE'
  | 'CLI_REMOTE'
  | 'CLI_NOT_FOUND'
  | 'CLI_CONFLICT'
  | 'CLI_NO_OUTPUT';

const EXIT_OF: Record<CliErrorCode, ExitCode> = {
  CLI_USAGE: EXIT.usage,
  CLI_CONFIG: EXIT.usage,
  CLI_STORE: EXIT.store,
  CLI_IN_USE: EXIT.inUse,
  CLI_NODE: EXIT.node,
  CLI_REMOTE: EXIT.failure,
  CLI_NOT_FOUND: EXIT.notFound,
  CLI_CONFLICT: EXIT.conflict,
  CLI_NO_OUTPUT: EXIT.noOutput,
};

/**
 * A failure the CLI reports in one line and maps to an exit code. `cause`
 * keeps the underlying error for `--log-level debug`.
 *
 * @example
 * ```ts
 * new CliError('CLI_CONFIG', 'port must be a number').exitCode // => 2
 * new CliError('CLI_IN_USE', 'held').exitCode // => 4
 * ```
 */
export class CliError extends Error {
  override readonly name: string = 'CliError';
  readonly exitCode: ExitCode;
  constructor(
    readonly code: CliErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.exitCode = EXIT_OF[code];
  }
}

/**
 * The runtime's root supervisor gave up (its children crashed faster than
 * its intensity allows): the node is dead, `start` exits with 5.
 */
export class NodeGaveUpError extends CliError {
  override readonly name = 'NodeGaveUpError';
  constructor(readonly exit: RuntimeExit) {
    super('CLI_NODE', describeRuntimeExit(exit));
  }
}

/** A bad configuration value or key, named by its dotted path and where it came from. */
export class ConfigError extends CliError {
  override readonly name = 'ConfigError';
  constructor(
    readonly key: string,
    readonly source: string,
    problem: string,
  ) {
    super('CLI_CONFIG', `${source}: ${key} ${problem}`);
  }
}
