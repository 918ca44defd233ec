/**
 * How a board command fails: one error class with a stable code, each code
 * with its HTTP status. The runtime throws its subclass
 * `RuntimeCommandError` (named so in `err.name` and stacks), so the server
 * tells a command failure by `instanceof`, never by `name`. Part of the
 * board port (boardPort.ts).
 */

/** Stable codes of command failures, each with its HTTP status. */
export const BOARD_COMMAND_STATUS = {
  not_found: 404,
  conflict: 409,
  invalid: 422,
  unavailable: 503,
  internal: 500,
} as const;

/** A code of {@link BoardCommandError}. */
export type BoardCommandErrorCode = keyof typeof BOARD_COMMAND_STATUS;

/**
 * The one error type commands reject with. `conflict`: the task is not in a
 * state that allows it (cancel a finished task, retry a running one);
 * `invalid`: the runtime refused the input; `unavailable`: try again later
 * (the store did not answer in time); `internal`: the store failed in a way
 * a retry cannot fix (a bug, logged by the node).
 */
export class BoardCommandError extends Error {
  // A string, not the literal: the runtime's subclass says its own name.
  override readonly name: string = 'BoardCommandError';
  constructor(
    readonly code: BoardCommandErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * A command refused because the node is stopping or stopped: the runtime's
 * `RuntimeStoppedError` is one (it says whether the write may have been
 * applied). Not a {@link BoardCommandError}, since a library caller tells it
 * by its own class and `exit`; the server answers it as `unavailable` (503),
 * as it answers a node that gave up.
 *
 * @example
 * ```ts
 * new BoardStoppedError('stopping') instanceof Error // => true
 * ```
 */
export class BoardStoppedError extends Error {}

/**
 * True for a command failure: a {@link BoardCommandError}, by class (the
 * runtime throws this very class). An error that only looks like one (same
 * `name` and `code`) is not: it is a bug, and the server answers 500.
 *
 * @example
 * ```ts
 * isBoardCommandError(new BoardCommandError('not_found', 'no such task')) // => true
 * isBoardCommandError(Object.assign(new Error('x'), { name: 'BoardCommandError', code: 'conflict' })) // => false
 * isBoardCommandError(new Error('boom')) // => false
 * ```
 */
export function isBoardCommandError(err: unknown): err is BoardCommandError {
  return err instanceof BoardCommandError;
}
